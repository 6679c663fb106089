"""imagelint's configuration: ``[tool.imagelint]`` in pyproject.toml, or ``.imagelint.toml``.

Searched from the working directory up to the repository root (the first
directory holding ``.git``), nearest first; in one directory ``.imagelint.toml``
wins over ``pyproject.toml``. ``--config FILE`` names the file explicitly
(a ``pyproject.toml`` is read from its ``[tool.imagelint]`` table, anything else
from its top level). Flags beat the file (the CLI merges them).

Keys::

    images = ["registry:ghcr.io/org/app:latest"]  # what `imagelint check` reads when no REF is given
    images = [{ ref = "registry:ghcr.io/org/app:latest", dockerfile = "docker/Dockerfile" }]
                                     # ... and the Dockerfile it was built from (SARIF points image findings there)
    select = ["IL1", "IL301"]        # IDs or prefixes; default: every rule
    ignore = ["IL303"]               # longest matching prefix wins over select
    severity = { IL104 = "error" }   # per-rule severity overrides
    fail-on = "error"                # error | warning | info | never
    matrix = "2026-11-29"            # matrix version, file, or "cluster"
    matrix-overlay = ["extra.toml"]   # (``matrix-overlays``, the old spelling, still works with a note)
    inline-ignores = true            # honour io.imagelint.ignore labels
    [target]                         # mirrors the target flags
    driver = ["535.104.05"]  gpus = ["H100"]  pool = ["driver=550.54.15,gpu=H100"]  brand = "..."  compute-capability = "9.0"
    arch = "amd64"  toolkit = "1.17.0"  device-plugin = "0.17.0"  runtime-mode = "legacy"
    file = "target.toml"
    [[ignores]]
    rule = "IL302"  image = "registry.example/app:*"  reason = "..."  expires = 2026-12-31

Errors are ``ConfigError`` with the file and the line of the offending key.

Selection lives here too (``RuleSelection``, ``selected_rules``, ``validate_code_prefix``):
``select``/``ignore`` by rule ID or prefix, the longest matching prefix wins, on a tie
``ignore`` wins; no ``select`` means every rule.
"""

from __future__ import annotations

import datetime as _dt
import functools
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from imagelint.errors import ConfigError
from imagelint.lazyre import lazy_pattern
from imagelint.rules import RULES, RuleInfo
from imagelint.tomlcompat import loads as toml_loads
from imagelint.tomlcompat import tomllib as toml_parser

FAIL_ON_LEVELS = ("error", "warning", "info", "never")
SEVERITY_LEVELS = ("error", "warning", "info")
CONFIG_FILE = ".imagelint.toml"
TARGET_KEYS = {
    "driver": "list", "gpus": "list", "pool": "list", "brand": "str", "compute-capability": "str", "arch": "str",
    "toolkit": "str", "device-plugin": "str", "runtime-mode": "str", "file": "str",
}
_TOP_KEYS = ("images", "select", "ignore", "severity", "fail-on", "matrix", "matrix-overlay", "inline-ignores", "target", "ignores")
# Old spellings still read, each with a deprecation note: old key -> the one spelling.
_OLD_KEYS = {"matrix-overlays": "matrix-overlay"}
_OLD_TARGET_KEYS = {"gpu": "gpus"}  # target files say gpus; [target] said gpu
_IGNORE_KEYS = ("rule", "image", "reason", "expires")
_CODE_RE = lazy_pattern(r"^[A-Z]+[0-9]*$")


@dataclass(frozen=True)
class IgnoreEntry:
    """A configured suppression: a rule (ID or prefix) on images matching a glob, with a reason."""

    rule: str
    image: str = "*"
    reason: str = ""
    expires: _dt.date | None = None
    source: str = ""  # "file:line" for notices


def ignore_root(config_path: str | None) -> str:
    """The directory ``[[ignores]]`` path globs are relative to: the config file's directory (as a
    ``.gitignore``'s patterns are relative to its own), else the repository root (the nearest
    directory holding ``.git``), else the working directory."""
    if config_path:
        return os.path.dirname(os.path.abspath(config_path))
    from imagelint.localfile import enclosing_repository

    here = os.getcwd()
    return enclosing_repository(here) or here


def path_glob_matches(glob: str, path: str, root: str) -> bool:
    """Whether an ``[[ignores]]`` ``image`` glob matches the linted file ``path``, with gitignore's
    rules on the normalised path relative to ``root``: ``lint train.py``, ``lint .`` (``./train.py``)
    and ``lint $PWD`` all give ``train.py``. A glob without ``/`` matches the name at any depth
    (``train.py``), ``**/`` any directories (``**/train.py``, ``k8s/**``), a leading ``/`` or one
    in the middle anchors it to ``root`` (``src/train.py``), and a directory's glob (``k8s/``,
    ``vendor``) matches every file under it."""
    from imagelint.static.gitignore import parse_patterns

    if path in ("", "-"):
        return False
    rel = os.path.relpath(os.path.abspath(path), root).replace(os.sep, "/")
    if rel == ".." or rel.startswith("../"):
        rel = os.path.normpath(path).replace(os.sep, "/").lstrip("/")
    patterns = parse_patterns(glob.strip())
    if len(patterns) != 1 or patterns[0].negated:
        return False
    pattern = patterns[0]
    parts = rel.split("/")
    if pattern.matches(rel, False):
        return True
    # a directory matched by the glob holds the file (gitignore: nothing under it comes back)
    return any(pattern.matches("/".join(parts[:n]), True) for n in range(1, len(parts)))


@dataclass(frozen=True)
class Config:
    """imagelint's settings: ``[tool.imagelint]`` or ``.imagelint.toml``, else defaults; flags override."""

    images: tuple[str, ...] = ()
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    severity: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    fail_on: str = "error"
    matrix: str | None = None
    matrix_overlays: tuple[str, ...] = ()
    inline_ignores: bool = True
    target: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    ignores: tuple[IgnoreEntry, ...] = ()
    path: str | None = None
    dockerfiles: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))  # image ref -> Dockerfile
    notices: tuple[str, ...] = ()  # deprecation notes (old spellings), for the CLI to print

    def with_overrides(self, **changes: Any) -> Config:
        """Flags beat the file: only the values given (not None) replace the file's."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


def find_config(start: str | os.PathLike | None = None) -> Path | None:
    """The nearest config file from ``start`` (default CWD) up to the repository root."""
    here = Path(start or os.getcwd()).resolve()
    for directory in (here, *here.parents):
        candidate = directory / CONFIG_FILE
        if candidate.is_file():
            return candidate
        pyproject = directory / "pyproject.toml"
        if pyproject.is_file() and _has_tool_table(pyproject):
            return pyproject
        if (directory / ".git").exists():
            return None
    return None


def _has_tool_table(path: Path) -> bool:
    from imagelint.localfile import read_regular_file

    try:
        text = read_regular_file(path).decode("utf-8")
        return re.search(r"^\s*\[\s*tool\.imagelint[\].]", text, re.M) is not None
    except (OSError, UnicodeDecodeError):
        return False


def load_config(path: str | os.PathLike | None = None, *, search: bool = True) -> Config:
    """Load the explicit file, else the one found by searching, else defaults."""
    if path is None:
        found = find_config() if search else None
        if found is None:
            return Config()
        path = found
    p = Path(path)
    try:
        from imagelint.localfile import read_regular_file

        text = read_regular_file(p).decode("utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config file: {exc.strerror or exc}", str(p)) from None
    except UnicodeDecodeError:
        raise ConfigError("config file is not UTF-8 text", str(p)) from None
    return parse_config(text, str(p))


def parse_config(text: str, path: str) -> Config:
    tomllib = toml_parser()
    try:
        doc = toml_loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"line (\d+)", str(exc))
        line = int(m.group(1)) if m else (max(1, len(text.splitlines())) if "end of document" in str(exc) else None)
        raise ConfigError(f"invalid TOML: {str(exc).split(' (at')[0]}", path, line) from None
    is_pyproject = os.path.basename(path) == "pyproject.toml"
    prefix = "tool.imagelint." if is_pyproject else ""
    table = doc.get("tool", {}).get("imagelint", {}) if is_pyproject else doc
    return _ConfigReader(text, path, prefix).read(table)


class _ConfigReader:
    def __init__(self, text: str, path: str, prefix: str) -> None:
        self.notices: list[str] = []
        self.lines = text.splitlines()
        self.path = path
        self.prefix = prefix

    # --- locating keys (tomllib keeps no positions) ---------------------------------------

    def _section_start(self, section: str, nth: int = 0) -> int:
        """Index of the line after the header of ``[section]`` / ``[[section]]`` (nth occurrence)."""
        if not section:
            return 0
        pattern = re.compile(r"^\s*\[\[?\s*" + re.escape(section) + r"\s*\]\]?\s*(#.*)?$")
        count = 0
        for i, line in enumerate(self.lines):
            if pattern.match(line):
                if count == nth:
                    return i + 1
                count += 1
        return 0

    def line_of(self, key: str, section: str = "", nth: int = 0) -> int | None:
        full = (self.prefix + section).rstrip(".")
        start = self._section_start(full, nth)
        key_re = re.compile(r"^\s*[\"']?" + re.escape(key) + r"[\"']?\s*=")
        dotted = re.compile(r"^\s*" + re.escape(section.rstrip(".") + "." + key if section else key) + r"\s*=")
        for i in range(start, len(self.lines)):
            if i > start and re.match(r"^\s*\[", self.lines[i]) and full:
                break
            if key_re.match(self.lines[i]) or dotted.match(self.lines[i]):
                return i + 1
        # Inline tables (severity = { IL104 = "error" }) or keys written elsewhere: first mention.
        for i, line in enumerate(self.lines):
            if re.search(r"(^|[\s{,\"'])" + re.escape(key) + r"[\"']?\s*=", line):
                return i + 1
        return None

    def fail(self, message: str, key: str, section: str = "", nth: int = 0) -> ConfigError:
        return ConfigError(message, self.path, self.line_of(key, section, nth))

    # --- reading -------------------------------------------------------------------------------

    def read(self, table: Mapping[str, Any]) -> Config:
        notices = self.notices
        table = dict(table)
        for old, new in _OLD_KEYS.items():
            if old in table:
                if new in table:
                    raise self.fail(f"{old} and {new} are one setting; keep {new}", old)
                line = self.line_of(old)
                notices.append(f"{self.path}{f':{line}' if line else ''}: {old!r} is deprecated; write {new!r}")
                table[new] = table.pop(old)
        for key in table:
            if key not in _TOP_KEYS:
                raise self.fail(f"unknown key {key!r} (expected one of: {', '.join(_TOP_KEYS)})", key)
        images, dockerfiles = self._images(table.get("images", []))
        select = self._codes(table, "select", validate_code_prefix)
        ignore = self._codes(table, "ignore", validate_code_prefix)
        severity = self._severity(table.get("severity", {}), validate_code_prefix)
        fail_on = table.get("fail-on", "error")
        if fail_on not in FAIL_ON_LEVELS:
            raise self.fail(f"fail-on must be one of {', '.join(FAIL_ON_LEVELS)}, not {fail_on!r}", "fail-on")
        matrix = table.get("matrix")
        if matrix is not None and not isinstance(matrix, str):
            raise self.fail("matrix must be a string (a version, a file path, or 'cluster')", "matrix")
        overlays = self._strings(table, "matrix-overlay")
        inline = table.get("inline-ignores", True)
        if not isinstance(inline, bool):
            raise self.fail("inline-ignores must be true or false", "inline-ignores")
        target = self._target(table.get("target", {}))
        ignores = self._ignores(table.get("ignores", []), validate_code_prefix)
        base = os.path.dirname(os.path.abspath(self.path))
        return Config(
            images=images, select=select, ignore=ignore, severity=MappingProxyType(severity), fail_on=fail_on,
            matrix=_relative(matrix, base), matrix_overlays=tuple(_relative(o, base) or o for o in overlays),
            inline_ignores=inline, target=MappingProxyType(target), ignores=ignores, path=self.path,
            dockerfiles=MappingProxyType({ref: os.path.normpath(os.path.join(base, d)) for ref, d in dockerfiles.items()}),
            notices=tuple(notices),
        )

    def _images(self, value: Any) -> tuple[tuple[str, ...], dict[str, str]]:
        """``images``: references, or ``{ ref = "...", dockerfile = "..." }`` tables, or a mix."""
        if isinstance(value, (str, dict)):
            value = [value]
        if not isinstance(value, list):
            raise self.fail("images must be a list of references or { ref, dockerfile } tables", "images")
        refs: list[str] = []
        dockerfiles: dict[str, str] = {}
        for entry in value:
            if isinstance(entry, str):
                refs.append(entry)
                continue
            if not isinstance(entry, dict):
                raise self.fail("images must be a list of references or { ref, dockerfile } tables", "images")
            unknown = sorted(set(entry) - {"ref", "dockerfile"})
            if unknown:
                raise self.fail(f"images: unknown key {unknown[0]!r} (expected ref, dockerfile)", "images")
            ref, dockerfile = entry.get("ref"), entry.get("dockerfile")
            if not isinstance(ref, str) or not ref.strip():
                raise self.fail("images: each table needs ref = \"REFERENCE\"", "images")
            if dockerfile is not None and not isinstance(dockerfile, str):
                raise self.fail("images: dockerfile must be a path (relative to the config file)", "images")
            refs.append(ref)
            if dockerfile:
                dockerfiles[ref] = dockerfile
        return tuple(refs), dockerfiles

    def _strings(self, table: Mapping[str, Any], key: str, section: str = "") -> tuple[str, ...]:
        value = table.get(key, [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(f"{key} must be a string or a list of strings", key, section)
        return tuple(value)

    def _codes(self, table: Mapping[str, Any], key: str, validate) -> tuple[str, ...]:
        codes = self._strings(table, key)
        out = []
        for code in codes:
            problem = validate(code)
            if problem:
                raise self.fail(f"{key}: {problem}", key)
            out.append(code.strip().upper())
        return tuple(out)

    def _severity(self, value: Any, validate) -> dict[str, str]:
        if not isinstance(value, dict):
            raise self.fail("severity must be a table of rule ID = level", "severity")
        out = {}
        for code, level in value.items():
            problem = validate(code)
            if problem:
                raise self.fail(f"severity: {problem}", code, "severity")
            if level not in SEVERITY_LEVELS:
                raise self.fail(f"severity of {code} must be one of {', '.join(SEVERITY_LEVELS)}, not {level!r}", code, "severity")
            out[code.strip().upper()] = level
        return out

    def _target(self, value: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail("target must be a table", "target")
        out: dict[str, Any] = {}
        value = dict(value)
        for old, new in _OLD_TARGET_KEYS.items():
            if old in value:
                if new in value:
                    raise self.fail(f"target.{old} and target.{new} are one setting; keep {new}", old, "target")
                line = self.line_of(old, "target")
                self.notices.append(f"{self.path}{f':{line}' if line else ''}: target.{old} is deprecated; write target.{new} "
                                    "(as in target files)")
                value[new] = value.pop(old)
        for key, v in value.items():
            kind = TARGET_KEYS.get(key)
            if kind is None:
                raise self.fail(f"unknown target key {key!r} (expected one of: {', '.join(TARGET_KEYS)})", key, "target")
            if kind == "list":
                if isinstance(v, str):
                    v = [v]
                if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
                    raise self.fail(f"target.{key} must be a string or a list of strings", key, "target")
                out[key] = tuple(v)
            else:
                if not isinstance(v, str):
                    raise self.fail(f"target.{key} must be a string", key, "target")
                out[key] = v
        if "file" in out:
            out["file"] = _relative(out["file"], os.path.dirname(os.path.abspath(self.path)))
        return out

    def _ignores(self, value: Any, validate) -> tuple[IgnoreEntry, ...]:
        if not isinstance(value, list) or not all(isinstance(x, dict) for x in value):
            raise self.fail("ignores must be an array of tables ([[ignores]])", "ignores")
        out = []
        for n, item in enumerate(value):
            for key in item:
                if key not in _IGNORE_KEYS:
                    raise self.fail(f"ignores[{n}]: unknown key {key!r} (expected {', '.join(_IGNORE_KEYS)})", key, "ignores", n)
            rule = item.get("rule")
            if not isinstance(rule, str) or validate(rule):
                raise self.fail(f"ignores[{n}]: rule must be a rule ID or prefix" + (f" ({validate(rule)})" if isinstance(rule, str) else ""), "rule", "ignores", n)
            image = item.get("image", "*")
            reason = item.get("reason", "")
            if not isinstance(image, str):
                raise self.fail(f"ignores[{n}]: image must be a glob string", "image", "ignores", n)
            if not isinstance(reason, str) or not reason.strip():
                raise self.fail(f"ignores[{n}]: reason is required (say why the finding is acceptable)", "reason" if "reason" in item else "rule", "ignores", n)
            expires = item.get("expires")
            if isinstance(expires, str):
                try:
                    expires = _dt.date.fromisoformat(expires)
                except ValueError:
                    raise self.fail(f"ignores[{n}]: expires must be a date YYYY-MM-DD", "expires", "ignores", n) from None
            elif isinstance(expires, _dt.datetime):
                expires = expires.date()
            elif expires is not None and not isinstance(expires, _dt.date):
                raise self.fail(f"ignores[{n}]: expires must be a date YYYY-MM-DD", "expires", "ignores", n)
            line = self.line_of("rule", "ignores", n)
            out.append(IgnoreEntry(rule.strip().upper(), image, reason.strip(), expires, f"{self.path}:{line}" if line else self.path))
        return tuple(out)


def _relative(value: str | None, base: str) -> str | None:
    """Paths in a config file are relative to the file (versions and 'cluster' pass through)."""
    if value is None:
        return None
    if value == "cluster" or value.startswith("cluster:"):
        return value
    if os.sep in value or "/" in value or value.endswith((".toml", ".json")):
        return value if os.path.isabs(value) else os.path.normpath(os.path.join(base, value))
    return value


# --- selection: which rules a run runs ------------------------------------------------------


def validate_code_prefix(code: str) -> str | None:
    """None when ``code`` is a rule ID or a prefix of one, else what is wrong."""
    c = code.strip().upper()
    if c == "ALL":
        return None
    if not _CODE_RE.match(c):
        return f"{code!r} is not a rule ID or prefix (e.g. IL101, IL1)"
    if not any(rule_id.startswith(c) for rule_id in RULES):
        return f"{code!r} matches no rule (known: {', '.join(RULES)})"
    return None


class RuleSelection:
    """select/ignore by the longest matching prefix (ties go to ignore)."""

    def __init__(self, select: Sequence[str] = (), ignore: Sequence[str] = ()) -> None:
        self.select = tuple("" if s.upper() == "ALL" else s.upper() for s in select) or ("",)
        self.ignore = tuple("" if s.upper() == "ALL" else s.upper() for s in ignore)

    def is_selected(self, rule_id: str) -> bool:
        sel = max((len(s) for s in self.select if rule_id.startswith(s)), default=-1)
        ign = max((len(s) for s in self.ignore if rule_id.startswith(s)), default=-1)
        return sel >= 0 and sel > ign

    def rules(self) -> list[RuleInfo]:
        return [r for r in RULES.values() if self.is_selected(r.id)]


def selected_rules(config: Config) -> list[RuleInfo]:
    try:
        return list(_selected_rules(tuple(config.select), tuple(config.ignore), id(RULES), len(RULES)))
    except TypeError:  # an unhashable selection: decided afresh
        return RuleSelection(config.select, config.ignore).rules()


@functools.lru_cache(maxsize=16)
def _selected_rules(select: tuple[str, ...], ignore: tuple[str, ...], registry: int, size: int) -> tuple[RuleInfo, ...]:
    # Decided once per selection (and registry: ``registry``/``size`` key it), not once per
    # result: ``lint`` of a manifest stream runs the rules on every pod with the same configuration.
    return tuple(RuleSelection(select, ignore).rules())
