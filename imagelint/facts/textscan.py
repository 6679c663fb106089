"""What the script and config facts keep of a candidate text file, decided while it streams past.

The layer reader runs ``TextFactsScanner`` over every file the script rules match (shell
scripts, entrypoints, files under the application roots). Instead of the whole file it keeps
only what ``imagelint.facts.scripts`` uses, as a small JSON value (the layer cache stores it):

  ``{"text": 0}``                      binary (a NUL in the first 4 KiB): never followed
  ``{"text": 1, "lang": ..., ...}``    text, with only the keys that have something:
      ``s``   GPU-index settings in the file's language: ``[kind, value, text, line]``
      ``n``   uses that need a driver capability: ``[capability, line]``
      ``r``   ``config-file=``-style references (INI/YAML), in line order
      ``u``   present when the file could be an unreferenced DeepStream config (an INI-like
              extension, a ``[group]`` line and ``gpu-id`` somewhere): its gpu-id settings,
              ``[value, text, line]``
      ``sh``  a shell script's text (scripts only: a shebang, ``.sh``/``.bash``, no extension),
              which the entrypoint walk tokenises; at most ``MAX_SCRIPT_TEXT`` characters
      ``notes``  what was not read (a visible note when a fact uses the file)
      ``partial``  True when the settings above do not cover the whole file
  ``{"text": 1, "unread_from": N}``  neither a script nor a config by its first N bytes: not
      read on (one shared value for the usual N = 4096, so thousands of data files cost little)

Files are read as a stream of line batches (the patterns are line-based), so a setting at
line 10,000 of a padded entrypoint is found; memory is one batch plus what is kept. Which
files are read to the end is decided by their first ``SNIFF_BYTES``: scripts always; files
with a config extension (``.txt``, ``.ini``, ``.cfg``, ``.conf``, ``.yml``, ``.yaml``) when
the first line that is not blank or a comment is an INI ``[group]`` header (a GKeyFile, as
DeepStream reads them, cannot hold a key outside a group; that line cut by the sniff's end is
read whole before it decides), when a YAML file has a top-level
DeepStream key in its head, or when the file is no longer than the sniff. Any other file
(``CMakeLists.txt``, a 40 KB data file) is "partial": if the entrypoint follows it, that is
a note and the image facts are not complete.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import Any

from imagelint.facts import gpuindex
from imagelint.lazyre import lazy_pattern

TEXT_SCANNER = "text-facts"
SNIFF_BYTES = 4096
MAX_SCAN_BYTES = 64 << 20  # a script or config larger than this is not read further (a note)
MAX_SCRIPT_TEXT = 1 << 20
MAX_LINE = 1 << 20  # one line longer than this is read in pieces (a note: a match may span a cut)
MAX_ITEMS = 1024  # settings, needs or references kept per file
# Lines holding a keyword that the Python patterns examine per file (~25 µs each, so ~1.6 s at
# most): past it they are counted, not examined (a note and complete: false; the C keyword pass
# still reads every byte), so a script of millions of "--gpu 1" lines costs a count, not
# minutes. Far above what real files hold, so a setting after thousands of commented-out ones
# is still found.
MAX_HIT_LINES = 1 << 16

BINARY: dict[str, Any] = {"text": 0}
NOT_A_CONFIG: dict[str, Any] = {"text": 1, "unread_from": SNIFF_BYTES}
# Text with nothing in it these facts use: one shared value per language (results are never mutated).
_PLAIN = {lang: {"text": 1, "lang": lang} for lang in (gpuindex.SHELL, gpuindex.PYTHON, gpuindex.INI, gpuindex.YAML)}

_CONFIG_EXTS = ("txt", "ini", "cfg", "conf", "yml", "yaml")
INI_EXTS = ("txt", "ini", "cfg", "conf")  # where unreferenced DeepStream configs are looked for
_SCRIPT_EXTS = ("sh", "bash", "py", "")
# ``gpuindex.language_of`` of a path with an extension and no shebang, by that extension.
_LANGUAGE_BY_EXT = {"py": gpuindex.PYTHON, "yml": gpuindex.YAML, "yaml": gpuindex.YAML,
                    **{ext: gpuindex.INI for ext in ("txt", "ini", "cfg", "conf")}}
# DeepStream config keys that name another config file (relative to the config's directory).
DEEPSTREAM_FILE_KEYS = lazy_pattern(r"^\s*(config-file|ll-config-file|config-file-path)\s*[=:]\s*(\S+)")
INI_GROUP = lazy_pattern(r"^\s*\[([^\]]+)\]\s*$")
# INI_GROUP for any line of a text whose line breaks are all "\n" (gpuindex.newline_text).
_GROUP_LINE = lazy_pattern(r"^[^\S\n]*\[[^\]\n]+\][^\S\n]*$", re.M)
# The first line that is neither blank nor a comment ("#", ";"), in such a text; in YAML, neither a
# document marker ("---") nor a directive ("%") either.
_REAL_LINE = lazy_pattern(r"^(?![^\S\n]*(?:[#;]|$))", re.M)
_YAML_REAL_LINE = lazy_pattern(r"^(?!---|%)(?![^\S\n]*(?:[#;]|$))", re.M)
# Top-level keys of DeepStream app and plugin YAML configs (deepstream-app, nvinfer, nvtracker,
# nvdspreprocess, nvdsanalytics, nvmsgconv): one at column 0 in a YAML file's head makes it a config.
# Searched as "\n" + text with the pattern led by that literal (what a multiline "^" would find):
# a literal lead lets the regex engine jump from newline to newline instead of trying every position.
_DEEPSTREAM_YAML_KEY_AT_LINE_START = lazy_pattern(
    "\n" r"(?:application|tiled-display|source\d*|source-list|source-attr-all|sink\d*|osd|streammux|"
    r"primary-gie\d*|secondary-gie\d*|tracker|property|class-attrs-[\w-]+|pre-process|preprocess|"
    r"nvds-analytics|message-converter|message-consumer\d*|img-save|tests|group-\d+|"
    r"BaseConfig|TargetManagement|TrajectoryManagement|DataAssociator|StateEstimator|"
    r"ObjectModelProjection|VisualTracker|ReID)\s*:"
)


def _extension(path: str) -> str:
    base = path.rpartition("/")[2]  # posixpath.basename's own rule, without its call
    return base.rpartition(".")[2].lower() if "." in base.lstrip(".") else ""


def plain_by_extension(extension: str) -> tuple[dict[str, Any], int] | None:
    """What ``settled_by_keyword_pass`` gives a member whose extension is ``extension`` (as
    ``_extension`` takes it, before ``lower()``) and whose first ``SNIFF_BYTES`` hold no NUL, that
    does not start with "#!" and whose bytes hold no keyword: (its plain result, the largest size
    for which that holds), or None when such a member is not settled by that alone (no extension:
    the path decides its language; a script: its text is kept). A config extension's member larger
    than the sniff waits for its first real line, so up to the sniff only."""
    ext = extension.lower()
    if not ext:
        return None
    lang = _LANGUAGE_BY_EXT.get(ext, gpuindex.SHELL)
    if lang == gpuindex.SHELL and ext in _SCRIPT_EXTS:
        return None
    return _PLAIN[lang], (SNIFF_BYTES if ext in _CONFIG_EXTS else sys.maxsize)


def _is_comment_or_blank(line: str) -> bool:
    s = line.strip()
    return not s or s.startswith(("#", ";"))


def _config_verdict(text: str, ext: str, cut: bool = False) -> bool | None:
    """Is this the start of a DeepStream/GKeyFile config? None while there are only blank or comment lines.

    ``cut``: ``text`` is a head that may end inside a line. A first real line that is that last,
    cut line and could still become an INI group line (``[`` and no ``]`` yet) decides nothing
    yet: None, and the whole line decides when it has been read."""
    yaml = ext in ("yml", "yaml")
    lines = gpuindex.newline_text(text)
    real = (_YAML_REAL_LINE if yaml else _REAL_LINE).search(lines)
    if real is None:
        return None
    end = lines.find("\n", real.start())
    line = lines[real.start() :] if end < 0 else lines[real.start() : end]
    if INI_GROUP.match(line):
        return True
    if cut and end < 0 and _may_become_group(line):
        return None
    return yaml and _DEEPSTREAM_YAML_KEY_AT_LINE_START.search("\n" + text) is not None


def _may_become_group(cut_line: str) -> bool:
    """Could a line cut here (not a group line yet) still read as an INI ``[group]`` once whole?"""
    text = cut_line.lstrip()
    return text.startswith("[") and "]" not in text


def _head_config_verdict(head: bytes, ext: str) -> bool | None:
    """``_config_verdict`` of ``head`` decoded, decoding only the lines it looks at when they can be.

    An INI-like file's verdict is its first real line, so its lines are decoded one by one up to
    that one (a cut at "\n" decodes the same as the whole, since "\n" is never part of a UTF-8
    sequence): most data files are decided by a first line of ~80 bytes, not 4 KiB decoded and
    scanned for line breaks. A line holding a break ``splitlines`` knows besides "\n" means the
    head's lines are cut its way: then the whole head decides, as ``_config_verdict``. YAML's
    DeepStream key may be on any line of the head, so a YAML head is always decoded whole.
    """
    if ext in ("yml", "yaml"):
        return _config_verdict(head.decode("utf-8", "replace"), ext, cut=True)
    start = 0
    while True:
        nl = head.find(b"\n", start)
        line = (head[start:] if nl < 0 else head[start:nl]).decode("utf-8", "replace")
        if gpuindex.has_other_breaks(line):
            return _config_verdict(head.decode("utf-8", "replace"), ext, cut=True)
        if not _is_comment_or_blank(line):
            if INI_GROUP.match(line):
                return True
            # The head's last line, cut at SNIFF_BYTES: "[applica" may yet be a group line.
            return None if nl < 0 and _may_become_group(line) else False
        if nl < 0:
            return None
        start = nl + 1


# What the first bytes say, beside the final results BINARY and NOT_A_CONFIG: read on (a script, a
# short file, a config), or read on with only blank/comment lines so far (the first real line decides).
_READ_ON = "read on"
_READ_ON_PENDING = "read on, first real line pending"


def _keeps_text(lang: str, ext: str, head: bytes) -> bool:
    """Does the entrypoint walk need this file's text: shell by its language, and a shebang or a script extension?"""
    return lang == gpuindex.SHELL and (head.startswith(b"#!") or ext in _SCRIPT_EXTS)


def _sniff(path: str, size: int, head: bytes) -> Any:
    """The one place the first ``SNIFF_BYTES`` decide a candidate: ``BINARY`` (a NUL in them),
    ``NOT_A_CONFIG`` (a config extension, more than the sniff, whose first real line is neither an
    INI group nor, in YAML, a DeepStream key), else ``_READ_ON`` / ``_READ_ON_PENDING``.
    ``head`` is the member's first ``SNIFF_BYTES`` (or all of it, when shorter); ``size`` -1: unknown."""
    if head.find(b"\x00", 0, SNIFF_BYTES) >= 0:
        return BINARY
    if head.startswith(b"#!") or 0 <= size <= SNIFF_BYTES:
        return _READ_ON
    ext = _extension(path)
    if ext not in _CONFIG_EXTS:
        return _READ_ON
    verdict = _head_config_verdict(head[:SNIFF_BYTES], ext)
    if verdict is False:
        return NOT_A_CONFIG
    return _READ_ON_PENDING if verdict is None else _READ_ON


def decide_head(path: str, size: int, head: bytes) -> dict[str, Any] | None:
    """A candidate's result from its first bytes alone, when they settle it (``BINARY`` or
    ``NOT_A_CONFIG``: most data files), else None (build a ``TextFactsScanner`` and feed it ``head``).

    The layer reader calls this first, before any scanner state is built: the result is the one
    the scanner would give fed the whole member. ``head`` must be the member's first
    ``SNIFF_BYTES`` bytes, or the whole member when it is shorter.
    """
    if len(head) < SNIFF_BYTES and len(head) != size:
        return None  # not the whole sniff: the scanner gathers it
    sniffed = _sniff(path, size, head)
    return sniffed if sniffed is BINARY or sniffed is NOT_A_CONFIG else None


class TextFactsScanner:
    """Streams one member; ``result()`` is the JSON value described in the module docstring."""

    reads_at_most = MAX_SCAN_BYTES + SNIFF_BYTES
    first_read = SNIFF_BYTES  # the reader's first chunk: a data file is decided, and dropped unread, after it
    # The reader asks this before building a scanner: a file its head settles costs no scanner.
    decide_head = staticmethod(decide_head)

    def __init__(self) -> None:
        # Only what deciding needs: most candidates (data files, sources) are decided by their
        # first 4 KiB and never read on, so the streaming state is built only for those that are.
        self.path = ""
        self.size = -1
        self._head = b""
        self._decided = False
        self._full = False  # read to the end
        self._binary = False
        self._fed = 0  # bytes handed to the line scanner
        self._skipped = 0
        self._lang = gpuindex.SHELL
        self.lines_matched = 0  # lines handed to the Python patterns: only those holding a keyword

    @staticmethod
    def settled_by_keyword_pass(path: str, size: int, data: bytes) -> dict[str, Any] | None:
        """The result of a member whose whole content is ``data`` when its head or one C pass over its
        bytes settles it, else None. The head settles a binary file, and a file with a config
        extension that is not one (``decide_head``). Most others (the sources of an application tree)
        hold no keyword at all; when nothing else is wanted of them either (neither a script's text
        nor a config verdict still pending on their first real line), nothing is decoded, counted or
        matched: their result is the plain one of their language (every fact is on a line that holds
        a keyword)."""
        # ``_sniff``, ``language_of`` and ``_keeps_text`` in one flat pass, the extension taken once:
        # this runs once per candidate file (an application tree holds tens of thousands).
        if data.find(b"\x00", 0, SNIFF_BYTES) >= 0:
            return BINARY
        shebang = data.startswith(b"#!")
        ext = _extension(path)
        if not shebang and not 0 <= size <= SNIFF_BYTES and ext in _CONFIG_EXTS:
            verdict = _head_config_verdict(data[:SNIFF_BYTES], ext)
            if verdict is False:
                return NOT_A_CONFIG
            if verdict is None:
                return None  # the first real line is still to come: the scanner reads on
        if shebang or not ext:
            lang = gpuindex.language_of(path, data)
            if lang == gpuindex.SHELL and (shebang or ext in _SCRIPT_EXTS):
                return None  # a script: its text is kept for the entrypoint walk
            plain = _PLAIN[lang]
        else:  # (a path ends with ".py" exactly when its extension is "py": the checks of language_of)
            by_extension = plain_by_extension(ext)  # (a config extension's size is settled above)
            if by_extension is None:
                return None  # a script: its text is kept for the entrypoint walk
            plain = by_extension[0]
        return None if gpuindex.holds_keyword(data) else plain

    @classmethod
    def settle_whole(cls) -> tuple[int, dict[str, Any], tuple[str, ...], Callable[..., list[int]], Callable[[str], Any]] | None:
        """``settled_by_keyword_pass`` as the layer reader's native loop applies it to a member held
        whole, with no Python per member (``imagelint.layers.model.MemberScanner``): (``SNIFF_BYTES``,
        ``BINARY``, the keywords, the native keyword search, ``plain_by_extension``). None without
        the native search, and for a subclass with a ``scan_whole`` or keyword pass of its own,
        which this would not describe."""
        search = gpuindex._native_lines
        own = getattr(cls.scan_whole, "__func__", None)
        if search is None or own is not getattr(TextFactsScanner.scan_whole, "__func__", None) or (
                cls.settled_by_keyword_pass is not TextFactsScanner.settled_by_keyword_pass):
            return None
        return SNIFF_BYTES, BINARY, gpuindex.KEYWORDS, search, plain_by_extension

    @classmethod
    def scan_whole(cls, path: str, size: int, data: bytes) -> tuple[dict[str, Any], int]:
        """``begin(path, size)``, ``feed(data)``, ``result()`` and ``held_bytes()`` of a member whose
        whole content is ``data`` (the reader's call when it has all of it in hand), in one step;
        settled by its head or one C pass when it can be (``settled_by_keyword_pass``)."""
        settled = cls.settled_by_keyword_pass(path, size, data)
        if settled is not None:
            return settled, 0
        scanner = cls()
        scanner.begin(path, size)
        scanner.feed(data)
        return scanner.result(), scanner.held_bytes()

    def _start_streaming(self, ext: str, keep_text: bool, pending: bool) -> None:
        self._full = True
        self._ext = ext
        self._group_matters = ext in INI_EXTS  # an INI-like extension: look for [group] lines
        self._keep_text = keep_text
        self._pending = pending  # a config-extension file with only blank/comment lines so far
        self._carry = b""
        self._line = 0  # lines completed so far
        self._text: list[str] = []
        self._text_len = 0
        self._settings: list[list[Any]] = []
        self._needs: list[list[Any]] = []
        self._refs: list[str] = []
        self._ini_gpu_ids: list[list[Any]] = []
        self._has_gpu_id = False
        self._has_group = False
        self._notes: list[str] = []
        self._incomplete = False  # something a fact may use was not read or not kept
        self._hits_unexamined = 0  # lines holding a keyword past MAX_HIT_LINES
        self._uncounted: str | None = None  # the last batch, its lines not yet counted
        self._uncounted_final = False

    # -- the reader's interface ------------------------------------------------------

    def begin(self, path: str, size: int) -> None:
        self.path = path
        self.size = size

    def feed(self, chunk: bytes) -> None:
        if not self._decided:
            self._head += chunk
            if len(self._head) < SNIFF_BYTES:
                return
            chunk, self._head = self._head, b""
            self._decide(chunk)  # streams ``chunk`` when the file is to be read to the end
            if not self._full:
                self._skipped += len(chunk)
            return
        if self._full:
            self._stream(chunk)
        else:
            self._skipped += len(chunk)

    def skippable(self) -> int:
        if self._decided and not self._full:
            return 1 << 62  # the reader caps it at what the member has left
        if self._full and self._fed >= MAX_SCAN_BYTES:
            return 1 << 62
        return 0

    def skipped(self, n: int) -> None:
        self._skipped += n

    @property
    def scanned_bytes(self) -> int:
        """Bytes handed to the line scanner (0 for a file its head decided: not read on)."""
        return self._fed if self._full else 0

    def held_bytes(self) -> int:
        """What this result keeps in memory, roughly (the reader counts it against its per-layer bound)."""
        if not self._full:
            return 0
        return self._text_len + 64 * (len(self._settings) + len(self._needs) + len(self._refs))

    def result(self) -> dict[str, Any]:
        if not self._decided:
            head, self._head = self._head, b""
            self._decide(head)
            if not self._full:
                self._skipped += len(head)
        if self._binary:
            return BINARY
        if not self._full:
            n = max(self._fed, min(self.size, SNIFF_BYTES))
            return NOT_A_CONFIG if n == SNIFF_BYTES else {"text": 1, "unread_from": n}
        if self._full:
            if self._carry:
                self._lines(self._carry, final=True)
                self._carry = b""
            if self._skipped:
                self._notes.append(f"not read past byte {self._fed} (over the {MAX_SCAN_BYTES >> 20} MiB scan limit)")
            if self._hits_unexamined:
                self._incomplete = True
                self._notes.append(f"{self._hits_unexamined} more lines holding a GPU keyword were not examined "
                                   f"(the first {MAX_HIT_LINES} were: the per-file limit)")
        out: dict[str, Any] = {"text": 1, "lang": self._lang}
        if self._settings:
            out["s"] = self._settings
        if self._needs:
            out["n"] = self._needs
        if self._refs:
            out["r"] = self._refs
        if self._has_gpu_id and self._has_group:
            out["u"] = ([[s[1], s[2], s[3]] for s in self._settings if s[0] == "gpu-id"]
                        if self._lang == gpuindex.INI else self._ini_gpu_ids)
        if self._keep_text:
            out["sh"] = "".join(self._text)
        if self._skipped or self._incomplete:
            out["partial"] = True
        if self._notes:
            out["notes"] = self._notes
        return _PLAIN.get(self._lang, out) if len(out) == 2 else out

    # -- deciding ------------------------------------------------------------------------

    def _decide(self, head: bytes) -> None:
        self._decided = True
        sniffed = _sniff(self.path, self.size, head)
        if sniffed is BINARY:
            self._binary = True
            return
        if sniffed is NOT_A_CONFIG:
            return  # not a config by its first real line: not read on
        ext = _extension(self.path)
        self._lang = gpuindex.language_of(self.path, head)
        keep_text = _keeps_text(self._lang, ext, head)
        self._start_streaming(ext, keep_text, sniffed is _READ_ON_PENDING)
        self._stream(head)

    # -- streaming -------------------------------------------------------------------------

    def _stream(self, chunk: bytes) -> None:
        room = MAX_SCAN_BYTES - self._fed
        if room <= 0:
            self._skipped += len(chunk)
            return
        if len(chunk) > room:
            self._skipped += len(chunk) - room
            chunk = chunk[:room]
        self._fed += len(chunk)
        data = self._carry + chunk if self._carry else chunk
        cut = data.rfind(b"\n")
        if cut < 0:
            self._carry = data
        else:
            self._carry = data[cut + 1 :]
            self._lines(data[: cut + 1], final=False)
            if not self._full:  # the first real line said: not a config
                self._carry = b""
                return
        if len(self._carry) > MAX_LINE:  # one enormous line: read it in pieces, at one line number
            piece, self._carry = self._carry[:MAX_LINE], self._carry[MAX_LINE:]
            self._count()
            self._incomplete = True
            if not any("longer than" in n for n in self._notes):
                self._notes.append(f"a line longer than {MAX_LINE >> 20} MiB is read in pieces near line {self._line + 1}")
            self._lines(piece, final=False, whole_line=False)

    def _lines(self, raw: bytes, final: bool, whole_line: bool = True) -> None:
        """One batch of whole lines (ending in '\\n', or the file's last line when ``final``)."""
        if not (self._pending or self._keep_text or self._group_matters):
            newlines = gpuindex.newline_count(raw)
            if newlines >= 0:
                # Only its facts are wanted of this batch, and "\n" is its only line break: its hit
                # lines are found in its bytes, and only they are decoded (gpuindex.byte_hit_lines).
                self._count()
                self._match(gpuindex.byte_hit_lines(raw, self._line + 1))
                if whole_line:  # its lines are counted already: the C pass gave them
                    self._line += newlines + (final and bool(raw) and not raw.endswith(b"\n"))
                return
        text = raw.decode("utf-8", "replace")  # a cut after '\n' never splits a UTF-8 sequence
        self._count()
        first = self._line + 1
        if self._pending:
            verdict = _config_verdict(text, self._ext)
            if verdict is False:
                self._pending = self._full = False
                return
            self._pending = verdict is None
        if self._keep_text:
            if self._text_len + len(text) <= MAX_SCRIPT_TEXT:
                self._text.append(text)
                self._text_len += len(text)
            elif self._text_len < MAX_SCRIPT_TEXT:
                self._text_len = MAX_SCRIPT_TEXT
                self._incomplete = True
                self._notes.append(f"script text kept only up to line {self._line} ({MAX_SCRIPT_TEXT >> 20} MiB): "
                                   "commands after it are not followed")
        self._match(gpuindex.hit_lines(text, first))
        if self._group_matters and not self._has_group and "[" in text:
            self._has_group = _GROUP_LINE.search(gpuindex.newline_text(text)) is not None
        if whole_line:
            self._uncounted = text  # counted when a later batch needs line numbers (most files have one batch)
            self._uncounted_final = final

    def _count(self) -> None:
        text, self._uncounted = self._uncounted, None
        if text is None:
            return
        if self._uncounted_final or gpuindex.has_other_breaks(text):
            self._line += len(text.splitlines())
        else:
            self._line += text.count("\n")

    def _match(self, hits: list[tuple[int, str]]) -> None:
        """The facts of one batch: Python sees only the lines that hold a keyword, each with its number
        (``gpuindex.hit_lines`` of its text, or ``byte_hit_lines`` of its bytes)."""
        room = MAX_HIT_LINES - self.lines_matched
        if len(hits) > room:
            self._hits_unexamined += len(hits) - max(room, 0)
            hits = hits[:max(room, 0)]
        lang = self._lang
        ini, yaml = lang == gpuindex.INI, lang == gpuindex.YAML
        # The caps are checked per batch: a batch's items are kept whole or not at all.
        want_settings = len(self._settings) < MAX_ITEMS
        want_needs = len(self._needs) < MAX_ITEMS
        want_ini_ids = not ini and len(self._ini_gpu_ids) < MAX_ITEMS
        want_refs = (ini or yaml) and len(self._refs) < MAX_ITEMS
        for number, raw in hits:
            self.lines_matched += 1
            code = gpuindex.strip_comment(raw, lang)
            if want_settings:
                for m in gpuindex.settings_in_line(code, lang, number):
                    self._settings.append([m.kind, m.value, m.text, m.line])
            if want_needs:
                for capability in gpuindex.needs_in_line(code):
                    self._needs.append([capability, number])
            if "gpu-id" in raw:
                self._has_gpu_id = True
            # The line read as INI: strip_comment's INI rule only adds whole-line ";" and "#" comments.
            ini_code = code if ini or not raw.lstrip().startswith((";", "#")) else ""
            if want_ini_ids and ("gpu-id" in ini_code or "gpu_id" in ini_code):
                for m in gpuindex.settings_in_line(ini_code, gpuindex.INI, number):
                    if m.kind == "gpu-id":
                        self._ini_gpu_ids.append([m.value, m.text, m.line])
            if want_refs and "config-file" in raw:
                ref = DEEPSTREAM_FILE_KEYS.match(ini_code)
                if ref:
                    self._refs.append(ref.group(2))


def scan_bytes(path: str, data: bytes) -> dict[str, Any]:
    """The scanner's result for a file captured whole by another rule (the walk may follow any file)."""
    scanner = TextFactsScanner()
    scanner.begin(path, len(data))
    for i in range(0, len(data), 1 << 16):
        scanner.feed(data[i : i + (1 << 16)])
    return scanner.result()


def is_text_facts(value: Any) -> bool:
    return isinstance(value, dict) and value.get("text") in (0, 1)


SCANNERS = {TEXT_SCANNER: TextFactsScanner}


def unread_note(info: dict[str, Any]) -> str | None:
    """The note for a result that does not cover its whole file, or None."""
    notes = list(info.get("notes", ()))
    if "unread_from" in info:
        notes.insert(0, f"not read past byte {info['unread_from']}: not a script or DeepStream config by its first lines")
    elif not info.get("partial"):
        return None
    return "; ".join(notes) or "not read to the end"
