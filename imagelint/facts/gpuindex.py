"""Where a GPU index is fixed in text: every pattern, in one place.

These are syntax (shell, Python, DeepStream/INI, YAML, command-line flags), not
NVIDIA facts, so they are code. ``find_gpu_settings(text, language)`` returns
each match with its line; comments are skipped. ``parse_indices`` turns a
value into the integer indices it names (UUIDs, ``all``, ``none``, ``void`` name
none). ``find_capability_needs`` spots uses that need a driver capability
(DeepStream, NVENC/NVDEC → ``video``).

Text is scanned the way grep does: ``hit_lines`` finds, in C, the lines that hold one of
``KEYWORDS`` (every pattern's match holds one), and only those lines reach the patterns and
``strip_comment`` in Python; the cost of a file grows with its bytes, not with its lines.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import AnyStr

from imagelint.lazyre import lazy_pattern
from imagelint.untrusted import is_digits

SHELL, PYTHON, INI, YAML = "shell", "python", "ini", "yaml"

_Q = r"""["']?"""  # optional quote
_VAL = r"""([^\s"';|&)]+)"""  # a value up to whitespace, quote or shell operator


@dataclass(frozen=True)
class IndexPattern:
    """One way text fixes a GPU index (an env assignment, a DeepStream key, a CLI flag, a Python call)."""

    kind: str
    regex: re.Pattern[str]
    languages: tuple[str, ...]
    # Every match holds one of these: a line without any is not searched. They are as long as the
    # pattern allows, since they are also the keywords that pick the lines Python sees at all
    # (``KEYWORDS``): "cuda" or "gpu" alone are on thousands of lines of any ML source tree.
    needles: tuple[str, ...]


def _p(kind: str, pattern: str, needles: str | tuple[str, ...], *languages: str) -> IndexPattern:
    return IndexPattern(kind, lazy_pattern(pattern), languages or (SHELL, PYTHON, INI, YAML),
                        (needles,) if isinstance(needles, str) else needles)


# Order matters: earlier patterns claim their span of a line first.
INDEX_PATTERNS: tuple[IndexPattern, ...] = (
    # Env assignments: export X=1, X=1 cmd, ENV-style "X=1" in argv, os.environ["X"] = "1", setdefault/putenv.
    _p("cuda-visible-devices", rf"""(?<![\w-])CUDA_VISIBLE_DEVICES\s*=\s*{_Q}{_VAL}""", "CUDA_VISIBLE_DEVICES", SHELL, INI, YAML),
    _p("nvidia-visible-devices", rf"""(?<![\w-])NVIDIA_VISIBLE_DEVICES\s*=\s*{_Q}{_VAL}""", "NVIDIA_VISIBLE_DEVICES",
       SHELL, INI, YAML),
    _p("cuda-visible-devices", r"""["']CUDA_VISIBLE_DEVICES["']\s*(?:\]\s*=|,)\s*f?["']([^"']*)["']""", "CUDA_VISIBLE_DEVICES",
       PYTHON),
    _p("nvidia-visible-devices", r"""["']NVIDIA_VISIBLE_DEVICES["']\s*(?:\]\s*=|,)\s*f?["']([^"']*)["']""",
       "NVIDIA_VISIBLE_DEVICES", PYTHON),
    _p("cuda-visible-devices", r"""(?<![\w-])CUDA_VISIBLE_DEVICES\s*:\s*["']?([^\s"'#]+)""", "CUDA_VISIBLE_DEVICES", YAML),
    # DeepStream / nvinfer keys (INI groups) and their YAML form.
    _p("gpu-id", r"""^\s*gpu[-_]id\s*[=:]\s*["']?(-?\d+)""", ("gpu-id", "gpu_id"), INI, YAML),
    # nvinferserver (Triton in DeepStream) protobuf-text configs: infer_config { gpu_ids: [0] }.
    _p("gpu-id", r"""^\s*gpu_ids\s*:\s*\[\s*([\d\s,]*\d)\s*\]""", "gpu_ids", INI),
    # Command-line flags: --gpu-id 1, --gpu_id=1, --gpu-ids 0,1, --gpus 1, --device cuda:1, --cuda-device 1.
    _p("cli-flag", r"""(?<![\w-])--(?:gpu[-_]?ids?|gpus|cuda[-_]device|device[-_]id)(?:\s+|=)["']?([\w,:-]+)""",
       ("--gpu", "--cuda", "--device"), SHELL, PYTHON),
    _p("cli-flag", r"""(?<![\w-])--device(?:\s+|=)["']?(cuda:\d+)""", "--device", SHELL, PYTHON),
    # Python: torch.cuda.set_device(1), torch.device("cuda", 1), "cuda:1" anywhere.
    _p("code", r"""\b(?:torch\.)?cuda\.set_device\(\s*(\d+)\s*\)""", "cuda.set_device", PYTHON),
    _p("code", r"""\btorch\.device\(\s*["']cuda["']\s*,\s*(\d+)\s*\)""", "torch.device(", PYTHON),
    _p("code", r"""["'](cuda:\d+)["']""", ("'cuda:", '"cuda:'), PYTHON, SHELL),
)


@dataclass(frozen=True)
class CapabilityPattern:
    """A use in text that needs a driver capability beyond ``utility,compute`` (DeepStream: ``video``)."""

    capability: str
    regex: re.Pattern[str]
    needles: tuple[str, ...]  # every match holds one: a line without any is not searched


# Uses that need a driver capability beyond the default utility,compute.
CAPABILITY_PATTERNS: tuple[CapabilityPattern, ...] = (
    CapabilityPattern("video", lazy_pattern(r"(?<![\w-])deepstream-app(?![\w-])"), ("deepstream-app",)),
    CapabilityPattern("video", lazy_pattern(r"\bnvv4l2(?:decoder|h26[45]enc|av1enc)\b"), ("nvv4l2",)),
    CapabilityPattern("video", lazy_pattern(r"\b(?:h264|hevc|av1)_nvenc\b|\b\w+_cuvid\b|-hwaccel\s+(?:cuda|nvdec|cuvid)\b"),
                      ("_nvenc", "_cuvid", "-hwaccel")),
    CapabilityPattern("video", lazy_pattern(r"\bPyNvVideoCodec\b|^\s*(?:import|from)\s+pyds\b"), ("PyNvVideoCodec", "pyds")),
    CapabilityPattern("graphics", lazy_pattern(r"\b__GLX_VENDOR_LIBRARY_NAME\s*=\s*nvidia\b"), ("__GLX_VENDOR_LIBRARY_NAME",)),
)


# Every match of the patterns above, and of the DeepStream config-file keys
# (``textscan.DEEPSTREAM_FILE_KEYS``), holds one of these: a line without any cannot match, so only
# lines that hold one are handed to the patterns. They are the patterns' own needles, less those
# that hold another (a line with "gpu_ids" holds "gpu_id").
# tests/facts/test_textscan.py checks each pattern's matches against its needles.
_NEEDLES = tuple(dict.fromkeys(
    [needle for p in INDEX_PATTERNS for needle in p.needles]
    + [needle for p in CAPABILITY_PATTERNS for needle in p.needles]
    + ["config-file"]
))
KEYWORDS: tuple[str, ...] = tuple(k for k in _NEEDLES if not any(other != k and other in k for other in _NEEDLES))


_KEYWORD_BYTES = tuple(k.encode("ascii") for k in KEYWORDS)


def holds_keyword(data: bytes) -> bool:
    """Does a file's raw content hold one of ``KEYWORDS``? Exactly when its text (UTF-8, invalid
    bytes replaced) does: the keywords are ASCII, an ASCII byte in UTF-8 is always that character,
    and a replaced invalid sequence never takes an ASCII byte with it. One C pass over the bytes,
    without decoding them (``_hitscan.lines`` reads bytes as one-byte characters)."""
    if _native_lines is not None:
        return bool(_native_lines(data, KEYWORDS, True))  # the search stops at the first keyword
    return any(keyword in data for keyword in _KEYWORD_BYTES)


def byte_hit_lines(data: bytes, first_line: int = 1) -> list[tuple[int, str]]:
    """``hit_lines`` of ``data`` decoded (UTF-8, invalid bytes replaced), for bytes whose only line
    break is "\\n" (``newline_count`` is not -1): found in the bytes by one C pass, and only the hit
    lines decoded. The same lines with the same text: "\\n" is never part of a UTF-8 sequence, so a
    line cut from the bytes decodes as that line of the decoded whole (and see ``holds_keyword``)."""
    if _native_lines is None:
        return hit_lines(data.decode("utf-8", "replace"), first_line)
    flat = _native_lines(data, KEYWORDS)
    return [(first_line + flat[i], data[flat[i + 1] : flat[i + 2]].decode("utf-8", "replace"))
            for i in range(0, len(flat), 3)]


def newline_count(data: bytes) -> int:
    """The number of "\\n" in ``data``, or -1 when its decoded text holds another line break
    str.splitlines() knows: whether its lines can be cut at "\\n" alone, and how many there are, in
    one C pass (``_hitscan.newlines``; ``has_other_breaks`` is the reference)."""
    if _native_newlines is not None:
        return _native_newlines(data)
    return -1 if has_other_breaks(data) else data.count(b"\n")


# The line breaks str.splitlines() knows: "\n", the other ASCII ones, and the non-ASCII ones.
_ASCII_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e"
_NON_ASCII_BREAKS = "\x85\u2028\u2029"
LINE_BREAKS = "\n" + _ASCII_BREAKS + _NON_ASCII_BREAKS
_OTHER_BREAK = lazy_pattern("\r\n|[" + _ASCII_BREAKS + _NON_ASCII_BREAKS + "]")
# The same breaks as they show in UTF-8: the non-ASCII ones' lead bytes always start a sequence,
# so these bytes are in a file exactly when the characters are in its decoded text.
_BYTE_BREAKS = (tuple(c.encode() for c in _ASCII_BREAKS), tuple(c.encode() for c in _NON_ASCII_BREAKS))


def has_other_breaks(text: str | bytes) -> bool:
    """Does ``text`` (bytes: their UTF-8 text, invalid bytes replaced) hold a line break
    str.splitlines() knows besides "\\n"?

    ``in`` per character runs at memchr speed, where a character-class regex tests each
    character in turn; ``isascii`` is O(1) on str.
    """
    if isinstance(text, bytes):
        return _holds_break(text, *_BYTE_BREAKS)
    return _holds_break(text, _ASCII_BREAKS, _NON_ASCII_BREAKS)


def _holds_break(text: AnyStr, ascii_breaks: Iterable[AnyStr], non_ascii_breaks: Iterable[AnyStr]) -> bool:
    for c in ascii_breaks:
        if c in text:
            return True
    if text.isascii():
        return False
    for c in non_ascii_breaks:
        if c in text:
            return True
    return False


def newline_text(text: str) -> str:
    """``text`` with every line break str.splitlines() knows ("\\r\\n" as one) written as "\\n":
    ``split("\\n")`` then cuts the lines (and counts them) as ``splitlines`` does."""
    return _OTHER_BREAK.sub("\n", text) if has_other_breaks(text) else text


_native_lines: Callable[..., list[int]] | None
_native_newlines: Callable[[bytes], int] | None
try:
    from imagelint.facts._hitscan import lines as _native_lines
    from imagelint.facts._hitscan import newlines as _native_newlines
except ImportError:  # not built (no compiler at install time): str.find passes do the search
    _native_lines = _native_newlines = None

NATIVE = _native_lines is not None


def hit_lines(text: str, first_line: int = 1) -> list[tuple[int, str]]:
    """The lines of ``text`` that hold a keyword, in order, each with its number (the first line of
    ``text`` is ``first_line``; lines cut and counted as str.splitlines() does).

    The search runs in C over the whole text: one pass with a table of the keywords' anchor
    characters (``_hitscan.c``), or, without the extension, one ``str.find`` pass per keyword (a single literal; an alternation in ``re`` tests every character against
    the keywords' first letters and is several times slower). Python runs once per hit line,
    never once per line.
    """
    text = newline_text(text)
    if _native_lines is not None:
        flat = _native_lines(text, KEYWORDS)
        return [(first_line + flat[i], text[flat[i + 1] : flat[i + 2]]) for i in range(0, len(flat), 3)]
    return _hit_lines_by_find(text, first_line)


def _hit_lines_by_find(text: str, first_line: int) -> list[tuple[int, str]]:
    """``hit_lines`` of a text whose breaks are all "\\n", by one ``str.find`` pass per keyword."""
    starts: set[int] = set()
    find, rfind = text.find, text.rfind
    for keyword in KEYWORDS:
        at = find(keyword)
        while at >= 0:
            starts.add(rfind("\n", 0, at) + 1)
            end = find("\n", at)
            if end < 0:
                break
            at = find(keyword, end)
    out: list[tuple[int, str]] = []
    number, counted = first_line, 0
    for start in sorted(starts):
        number += text.count("\n", counted, start)
        counted = start
        end = find("\n", start)
        out.append((number, text[start:] if end < 0 else text[start:end]))
    return out


@dataclass(frozen=True)
class TextMatch:
    """A GPU-index setting found in one line of text; the caller gives it provenance (``GpuIndexSetting``)."""

    kind: str
    value: str
    indices: tuple[int, ...]
    text: str
    line: int


def parse_indices(value: str) -> tuple[int, ...]:
    """``1`` → (1,), ``0,2`` → (0, 2), ``cuda:1`` → (1,); UUIDs/MIG ids/``all``/``none``/``void`` → ()."""
    out = []
    for token in value.strip().strip("\"'").split(","):
        token = token.strip()
        if token.startswith("cuda:"):
            token = token[5:]
        if is_digits(token, 4):  # ASCII only: '²'.isdigit() is true and int('²') fails
            out.append(int(token))
    return tuple(out)


# The code part of a line: runs of ordinary characters, quoted strings (an unclosed quote runs to
# the end of the line) and "#" right after a non-space character. It stops at a comment's "#".
_CODE_PART = lazy_pattern(r"""(?:[^"'#]+|"[^"]*"?|'[^']*'?|(?<=\S)#)*""")


def strip_comment(line: str, language: str) -> str:
    """Drop a trailing comment (``#`` at line start or after whitespace, outside quotes; ``;`` in INI)."""
    if language == INI and line.lstrip().startswith((";", "#")):
        return ""
    if "#" not in line:
        return line
    code = _CODE_PART.match(line)  # always matches: every part of the pattern is optional
    return line[: code.end()] if code else line


def language_of(path: str, data: bytes) -> str:
    """A file's language, by its shebang line (in its first 128 bytes), else by its extension."""
    if data.startswith(b"#!"):
        first = data[:128].split(b"\n", 1)[0]
        return PYTHON if b"python" in first else SHELL
    lower = path.lower()
    if lower.endswith(".py"):
        return PYTHON
    if lower.endswith((".yml", ".yaml")):
        return YAML
    if lower.endswith((".txt", ".ini", ".cfg", ".conf")):
        return INI
    return SHELL


def settings_in_line(code: str, language: str, number: int) -> list[TextMatch]:
    """The GPU-index settings in one line whose comment is already stripped (``strip_comment``)."""
    out: list[TextMatch] = []
    if not code.strip():
        return out
    taken: list[tuple[int, int]] = []
    for pattern in INDEX_PATTERNS:
        if language not in pattern.languages or not any(needle in code for needle in pattern.needles):
            continue
        for m in pattern.regex.finditer(code):
            if any(m.start() < end and start < m.end() for start, end in taken):
                continue
            taken.append((m.start(), m.end()))
            value = m.group(1)
            out.append(TextMatch(pattern.kind, value, parse_indices(value), m.group(0).strip(), number))
    return out


def needs_in_line(code: str) -> list[str]:
    """The driver capabilities one comment-stripped line needs, each once."""
    out: list[str] = []
    for pattern in CAPABILITY_PATTERNS:
        if pattern.capability in out:
            continue
        for needle in pattern.needles:
            if needle in code:
                if pattern.regex.search(code):
                    out.append(pattern.capability)
                break
    return out


def find_gpu_settings(text: str, language: str, first_line: int = 1) -> list[TextMatch]:
    out: list[TextMatch] = []
    for number, raw in hit_lines(text, first_line):
        out += settings_in_line(strip_comment(raw, language), language, number)
    return out


def find_capability_needs(text: str, language: str, first_line: int = 1) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    for number, raw in hit_lines(text, first_line):
        out += [(capability, number) for capability in needs_in_line(strip_comment(raw, language))]
    return out
