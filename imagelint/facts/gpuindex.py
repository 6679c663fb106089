"""Where a GPU index is fixed in text: every pattern, in one place.

These are syntax (shell, Python, DeepStream/INI, YAML, command-line flags), not
NVIDIA facts, so they are code. ``find_gpu_settings(text, language)`` returns
each match with its line; comments are skipped. ``parse_indices`` turns a
value into the integer indices it names (UUIDs, ``all``, ``none``, ``void`` name
none). ``find_capability_needs`` spots uses that need a driver capability
(DeepStream, NVENC/NVDEC → ``video``).
"""

from __future__ import annotations

import re

from dataclasses import dataclass
from imagelint.lazyre import lazy_pattern

SHELL, PYTHON, INI, YAML = "shell", "python", "ini", "yaml"

_Q = r"""["']?"""  # optional quote
_VAL = r"""([^\s"';|&)]+)"""  # a value up to whitespace, quote or shell operator


@dataclass(frozen=True)
class IndexPattern:
    kind: str
    regex: re.Pattern[str]
    languages: tuple[str, ...]


def _p(kind: str, pattern: str, *languages: str) -> IndexPattern:
    return IndexPattern(kind, lazy_pattern(pattern), languages or (SHELL, PYTHON, INI, YAML))


# Order matters: earlier patterns claim their span of a line first.
INDEX_PATTERNS: tuple[IndexPattern, ...] = (
    # Env assignments: export X=1, X=1 cmd, ENV-style "X=1" in argv, os.environ["X"] = "1", setdefault/putenv.
    _p("cuda-visible-devices", rf"""(?<![\w-])CUDA_VISIBLE_DEVICES\s*=\s*{_Q}{_VAL}""", SHELL, INI, YAML),
    _p("nvidia-visible-devices", rf"""(?<![\w-])NVIDIA_VISIBLE_DEVICES\s*=\s*{_Q}{_VAL}""", SHELL, INI, YAML),
    _p("cuda-visible-devices", r"""["']CUDA_VISIBLE_DEVICES["']\s*(?:\]\s*=|,)\s*f?["']([^"']*)["']""", PYTHON),
    _p("nvidia-visible-devices", r"""["']NVIDIA_VISIBLE_DEVICES["']\s*(?:\]\s*=|,)\s*f?["']([^"']*)["']""", PYTHON),
    _p("cuda-visible-devices", r"""(?<![\w-])CUDA_VISIBLE_DEVICES\s*:\s*["']?([^\s"'#]+)""", YAML),
    # DeepStream / nvinfer keys (INI groups) and their YAML form.
    _p("gpu-id", r"""^\s*gpu[-_]id\s*[=:]\s*["']?(-?\d+)""", INI, YAML),
    # nvinferserver (Triton in DeepStream) protobuf-text configs: infer_config { gpu_ids: [0] }.
    _p("gpu-id", r"""^\s*gpu_ids\s*:\s*\[\s*([\d\s,]*\d)\s*\]""", INI),
    # Command-line flags: --gpu-id 1, --gpu_id=1, --gpu-ids 0,1, --gpus 1, --device cuda:1, --cuda-device 1.
    _p("cli-flag", r"""(?<![\w-])--(?:gpu[-_]?ids?|gpus|cuda[-_]device|device[-_]id)(?:\s+|=)["']?([\w,:-]+)""", SHELL, PYTHON),
    _p("cli-flag", r"""(?<![\w-])--device(?:\s+|=)["']?(cuda:\d+)""", SHELL, PYTHON),
    # Python: torch.cuda.set_device(1), torch.device("cuda", 1), "cuda:1" anywhere.
    _p("code", r"""\b(?:torch\.)?cuda\.set_device\(\s*(\d+)\s*\)""", PYTHON),
    _p("code", r"""\btorch\.device\(\s*["']cuda["']\s*,\s*(\d+)\s*\)""", PYTHON),
    _p("code", r"""["'](cuda:\d+)["']""", PYTHON, SHELL),
)

# Uses that need a driver capability beyond the default utility,compute.
CAPABILITY_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("video", lazy_pattern(r"(?<![\w-])deepstream-app(?![\w-])")),
    ("video", lazy_pattern(r"\bnvv4l2(?:decoder|h26[45]enc|av1enc)\b")),
    ("video", lazy_pattern(r"\b(?:h264|hevc|av1)_nvenc\b|\b\w+_cuvid\b|-hwaccel\s+(?:cuda|nvdec|cuvid)\b")),
    ("video", lazy_pattern(r"\bPyNvVideoCodec\b|^\s*(?:import|from)\s+pyds\b")),
    ("graphics", lazy_pattern(r"\b__GLX_VENDOR_LIBRARY_NAME\s*=\s*nvidia\b")),
)


# Every match of the patterns above (and of the config-file keys) contains one of these: a line
# without any cannot match, so a streamed file runs the regexes only on batches that hold one.
# tests/facts/test_gpuindex_scripts.py checks each pattern's examples against this list.
KEYWORDS: tuple[str, ...] = (
    "VISIBLE_DEVICES", "gpu", "cuda", "--device", "config-file", "deepstream-app", "nvv4l2", "_nvenc",
    "_cuvid", "hwaccel", "PyNvVideoCodec", "pyds", "GLX_VENDOR_LIBRARY_NAME",
)


def may_match(text: str) -> bool:
    """False when no pattern here can match anywhere in ``text`` (``in`` per keyword: faster than one regex)."""
    for keyword in KEYWORDS:
        if keyword in text:
            return True
    return False


@dataclass(frozen=True)
class TextMatch:
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
        if token.isdigit():
            out.append(int(token))
    return tuple(out)


def strip_comment(line: str, language: str) -> str:
    """Drop a trailing comment (``#`` at line start or after whitespace, outside quotes; ``;`` in INI)."""
    if language == INI and line.lstrip().startswith((";", "#")):
        return ""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i]
    return line


def language_of(path: str, data: bytes) -> str:
    first = data[:128].split(b"\n", 1)[0]
    if first.startswith(b"#!"):
        return PYTHON if b"python" in first else SHELL
    lower = path.lower()
    if lower.endswith(".py"):
        return PYTHON
    if lower.endswith((".yml", ".yaml")):
        return YAML
    if lower.endswith((".txt", ".ini", ".cfg", ".conf")):
        return INI
    return SHELL


def find_gpu_settings(text: str, language: str, first_line: int = 1) -> list[TextMatch]:
    out: list[TextMatch] = []
    for number, raw in enumerate(text.splitlines(), first_line):
        line = strip_comment(raw, language)
        if not line.strip():
            continue
        taken: list[tuple[int, int]] = []
        for pattern in INDEX_PATTERNS:
            if language not in pattern.languages:
                continue
            for m in pattern.regex.finditer(line):
                if any(m.start() < end and start < m.end() for start, end in taken):
                    continue
                taken.append((m.start(), m.end()))
                value = m.group(1)
                out.append(TextMatch(pattern.kind, value, parse_indices(value), m.group(0).strip(), number))
    return out


def find_capability_needs(text: str, language: str, first_line: int = 1) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    for number, raw in enumerate(text.splitlines(), first_line):
        line = strip_comment(raw, language)
        for capability, regex in CAPABILITY_PATTERNS:
            if regex.search(line) and (capability, number) not in out:
                out.append((capability, number))
    return out
