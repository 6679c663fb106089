"""``matrices/doctor-signatures.toml``: what doctor recognises in logs, events and pod specs.

The rows are NVIDIA and Kubernetes facts (the wording components log, what it means, what to
change), so they are data beside the matrices, each with its ``source``. ``load_signatures()``
reads and validates the file once (through the matrix loader's parsed-TOML cache); a row that
is wrong is a ``ConfigError`` naming the row, never a silently skipped signature.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from imagelint.errors import ConfigError

FILE = "doctor-signatures.toml"
STAGES = (1, 2, 3, 4, 5, 6)  # 6 = isolation
PLACES = ("log", "event", "spec")
COMPONENTS = ("device-plugin", "toolkit", "driver", "any")
_SIGNATURE_KEYS = {"id", "stage", "in", "component", "reason", "pattern", "meaning", "fix", "source"}
_SETTING_KEYS = {"id", "component", "env", "default", "source", "uncertain"}


@dataclass(frozen=True)
class Signature:
    """One ``[[signature]]`` row: a failure doctor recognises in a log, event or pod spec, and its fix."""

    id: str
    stage: int
    places: tuple[str, ...]
    component: str  # for logs: whose
    reason: str  # for events: only this event reason ("" = any)
    pattern: re.Pattern[str] | None  # None: a spec condition doctor's code checks
    meaning: str
    fix: str
    source: str

    def matches(self, line: str) -> re.Match[str] | None:
        return self.pattern.search(line) if self.pattern is not None else None


@dataclass(frozen=True)
class Setting:
    """A ``[[setting]]`` row: an NVIDIA component setting doctor reads from DaemonSet env, and its default."""

    id: str
    component: str
    env: tuple[str, ...]
    default: str
    source: str


@dataclass(frozen=True)
class Signatures:
    """``doctor-signatures.toml`` as loaded and validated (``load_signatures``), looked up by row id."""

    signatures: tuple[Signature, ...]
    settings: tuple[Setting, ...]
    origin: str

    def by_id(self, signature_id: str) -> Signature:
        for signature in self.signatures:
            if signature.id == signature_id:
                return signature
        raise ConfigError(f"no signature {signature_id!r}", self.origin)

    def setting(self, setting_id: str) -> Setting:
        for setting in self.settings:
            if setting.id == setting_id:
                return setting
        raise ConfigError(f"no setting {setting_id!r}", self.origin)

    def first_match(self, line: str, place: str, component: str = "any", reason: str = "") -> Signature | None:
        """The first row (file order) for ``place`` whose pattern matches ``line``."""
        return next(iter(self.all_matches(line, place, component, reason, first=True)), None)

    def all_matches(self, line: str, place: str, component: str = "any", reason: str = "", first: bool = False) -> list[Signature]:
        found = []
        for signature in self.signatures:
            if place not in signature.places or signature.pattern is None:
                continue
            if place == "log" and signature.component not in ("any", component):
                continue
            if place == "event" and signature.reason and signature.reason != reason:
                continue
            if signature.matches(line):
                found.append(signature)
                if first:
                    break
        return found


def _text(row: Mapping[str, Any], key: str, where: str, origin: str, required: bool = True) -> str:
    value = row.get(key, "")
    if not isinstance(value, str) or (required and not value.strip()):
        raise ConfigError(f"{where}: {key!r} must be a non-empty string", origin)
    return value.strip()


def signature_from_row(row: Any, index: int, origin: str) -> Signature:
    where = f"signature #{index + 1}"
    if not isinstance(row, Mapping):
        raise ConfigError(f"{where}: not a table", origin)
    unknown = set(row) - _SIGNATURE_KEYS
    if unknown:
        raise ConfigError(f"{where}: unknown keys {sorted(unknown)}", origin)
    ident = _text(row, "id", where, origin)
    where = f"signature {ident!r}"
    stage = row.get("stage")
    if isinstance(stage, bool) or stage not in STAGES:
        raise ConfigError(f"{where}: stage must be one of {list(STAGES)}", origin)
    places = row.get("in")
    if not isinstance(places, list) or not places or any(p not in PLACES for p in places):
        raise ConfigError(f"{where}: 'in' must list some of {list(PLACES)}", origin)
    component = _text(row, "component", where, origin, required=False) or "any"
    if component not in COMPONENTS:
        raise ConfigError(f"{where}: component must be one of {list(COMPONENTS)}", origin)
    raw = _text(row, "pattern", where, origin, required=False)
    if not raw and any(p != "spec" for p in places):
        raise ConfigError(f"{where}: a log or event signature needs a pattern", origin)
    try:
        pattern = re.compile(raw, re.IGNORECASE) if raw else None
    except re.error as exc:
        raise ConfigError(f"{where}: pattern is not a valid regular expression ({exc})", origin) from None
    source = _text(row, "source", where, origin)
    return Signature(
        id=ident, stage=int(stage), places=tuple(places), component=component,
        reason=_text(row, "reason", where, origin, required=False), pattern=pattern,
        meaning=_text(row, "meaning", where, origin), fix=_text(row, "fix", where, origin), source=source,
    )


def setting_from_row(row: Any, index: int, origin: str) -> Setting:
    where = f"setting #{index + 1}"
    if not isinstance(row, Mapping) or set(row) - _SETTING_KEYS:
        raise ConfigError(f"{where}: not a table of {sorted(_SETTING_KEYS)}", origin)
    env = row.get("env")
    if not isinstance(env, list) or not env or not all(isinstance(e, str) and e for e in env):
        raise ConfigError(f"{where}: 'env' must list environment variable names", origin)
    return Setting(
        id=_text(row, "id", where, origin), component=_text(row, "component", where, origin),
        env=tuple(env), default=_text(row, "default", where, origin), source=_text(row, "source", where, origin),
    )


def signatures_from_document(doc: Mapping[str, Any], origin: str) -> Signatures:
    if doc.get("schema") != 1:
        raise ConfigError("schema must be 1", origin)
    rows: Sequence[Any] = doc.get("signature") or []
    settings: Sequence[Any] = doc.get("setting") or []
    if set(doc) - {"schema", "signature", "setting"}:
        raise ConfigError(f"unknown tables {sorted(set(doc) - {'schema', 'signature', 'setting'})}", origin)
    signatures = tuple(signature_from_row(r, i, origin) for i, r in enumerate(rows))
    ids = [s.id for s in signatures]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ConfigError(f"duplicate signature ids {duplicates}", origin)
    return Signatures(signatures, tuple(setting_from_row(r, i, origin) for i, r in enumerate(settings)), origin)


@functools.lru_cache(maxsize=1)
def load_signatures() -> Signatures:
    """The shipped signatures (cached for the process)."""
    from imagelint.matrix.loader import shipped_document

    return signatures_from_document(shipped_document(FILE, "doctor signatures"), f"matrices/{FILE}")


__all__ = ["FILE", "Setting", "Signature", "Signatures", "load_signatures", "signatures_from_document"]
