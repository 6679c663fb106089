"""Driver-owned libraries inside an image (libcuda, libnvidia-ml, ...), with role and version.

Which names are driver-owned, and which directories make a copy a stub or a
forward-compat library, is NVIDIA data: ``matrices/driver-libraries.toml``.
A compat ``libcuda`` also gets its ``.note.cuda.fwd_compatibility`` ELF note,
read by the streaming ``ElfNoteScanner`` while the layer passes.
"""

from __future__ import annotations

import fnmatch
import posixpath
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from imagelint.errors import ConfigError
from imagelint.facts.elf import ElfNoteScanner
from imagelint.facts.fsview import FilesystemView, file_provenance
from imagelint.facts.loader import LoaderView
from imagelint.facts.model import (
    DriverLibrary,
    ForwardCompatNote,
    LoaderFacts,
    Provenance,
)
from imagelint.layers.model import FILE, HARDLINK, SYMLINK, CaptureRule
from imagelint.lazyre import lazy_pattern
from imagelint.tomlcompat import loads as toml_loads
from imagelint.tomlcompat import tomllib as toml_parser
from imagelint.untrusted import is_digits, loads_json

MATRIX_FILE = "driver-libraries.toml"
ELF_NOTES_SCANNER = "elf-notes"
_NAME_VERSION_RE = lazy_pattern(r"\.so\.(\d+\.\d+(?:\.\d+)*)$")


@dataclass(frozen=True)
class DriverLibraryPattern:
    """A ``driver-libraries.toml`` row: a host driver library and the capability the toolkit mounts it for."""

    pattern: str
    capability: str
    source: str


@dataclass(frozen=True)
class DriverLibraryTable:
    """``matrices/driver-libraries.toml`` as loaded: which files are driver-owned, and which directories make
    a copy a stub or a forward-compat library."""

    libraries: tuple[DriverLibraryPattern, ...]
    stub_dir: str
    compat_dir: str
    note_section: str
    note_owner: str

    def match(self, name: str) -> DriverLibraryPattern | None:
        return next((p for p in self.libraries if fnmatch.fnmatchcase(name, p.pattern)), None)

    def role(self, path: str) -> str:
        parts = path.split("/")[:-1]
        if self.stub_dir in parts:
            return "stub"
        first, _, second = self.compat_dir.partition("/")
        for i in range(len(parts) - 1):
            if fnmatch.fnmatchcase(parts[i], first) and second in parts[i + 1 :]:
                return "compat"
        return "real"


def parse_driver_library_table(text: str, where: str = MATRIX_FILE) -> DriverLibraryTable:
    tomllib = toml_parser()
    try:
        doc = toml_loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"invalid driver library table: {exc}", where) from None
    return _table_from_document(doc, where)


def _table_from_document(doc: Any, where: str) -> DriverLibraryTable:
    try:
        rows = doc["library"]
        roles = doc["roles"]
        libs = tuple(DriverLibraryPattern(str(r["pattern"]), str(r["capability"]), str(r["source"])) for r in rows)
        table = DriverLibraryTable(libs, str(roles["stub_dir"]), str(roles["compat_dir"]),
                                   str(roles["fwd_compat_note_section"]), str(roles["fwd_compat_note_owner"]))
    except (KeyError, TypeError) as exc:
        raise ConfigError(f"invalid driver library table: {exc}", where) from None
    if not libs or any(not (p.pattern and p.source) for p in libs):
        raise ConfigError("every driver library row needs a pattern and a source", where)
    return table


@lru_cache(maxsize=1)
def driver_library_table() -> DriverLibraryTable:
    # Through the parsed-TOML cache lint uses too, found where the matrices are.
    from imagelint.matrix.loader import shipped_document

    return _table_from_document(shipped_document(MATRIX_FILE, "driver library table"), MATRIX_FILE)


def capture_rules() -> tuple[CaptureRule, ...]:
    table = driver_library_table()
    # libcuda files are scanned for the fwd-compat note (compat ones carry it; a real one
    # bundled by mistake may too). The reader applies the first matching rule, so scans go first.
    scan = tuple(CaptureRule(f"**/{p.pattern}", "scan", name=ELF_NOTES_SCANNER)
                 for p in table.libraries if p.pattern.startswith("libcuda."))
    return scan + tuple(CaptureRule(f"**/{p.pattern}", "record") for p in table.libraries)


def version_from_name(name: str) -> str | None:
    """``libcuda.so.535.104.05`` → ``535.104.05``; ``libcuda.so.1`` names an ABI, not a driver (None)."""
    m = _NAME_VERSION_RE.search(name)
    return m.group(1) if m else None


def forward_compat_note(scan: Any, table: DriverLibraryTable) -> tuple[ForwardCompatNote | None, str | None]:
    """The fwd-compat note from an ``ElfNoteScanner`` result: (note, problem)."""
    if not isinstance(scan, dict) or not scan.get("elf"):
        return None, None
    notes = [n for n in scan.get("notes", []) if n.get("owner") == table.note_owner]
    chosen = [n for n in notes if n.get("section") == table.note_section]
    if not chosen:
        # Section table not seen (truncated, stripped): an NVIDIA note outside any other named section.
        chosen = [n for n in notes if n.get("section") in (None, table.note_section)]
    if not chosen:
        return None, None
    raw = str(chosen[0].get("desc", ""))
    try:
        doc = loads_json(raw)
    except ValueError:
        return None, f"{table.note_section}: could not parse the note's JSON"
    if not isinstance(doc, dict):
        return None, f"{table.note_section}: note is not a JSON object"

    def ints(key: str) -> tuple[int, ...]:
        value = doc.get(key) or []
        return tuple(int(v) for v in value if isinstance(v, (int, float)) or (isinstance(v, str) and is_digits(v)))

    version = doc.get("CUDA Version")
    return ForwardCompatNote(str(version) if version is not None else None, ints("Driver"), ints("Device"), raw), None


def driver_libraries(fs: FilesystemView, loader: LoaderFacts, warnings: list[str]) -> tuple[DriverLibrary, ...]:
    table = driver_library_table()
    view = LoaderView(loader, fs)
    found: dict[str, DriverLibrary] = {}
    for pattern in table.libraries:
        for entry in fs.glob(f"**/{pattern.pattern}"):
            if entry.path in found or entry.kind not in (FILE, SYMLINK, HARDLINK):
                continue
            name = posixpath.basename(entry.path)
            role = table.role(entry.path)
            note = None
            if entry.kind != SYMLINK:
                note, problem = forward_compat_note(fs.scan(entry.path), table)
                if problem:
                    warnings.append(f"/{entry.path}: {problem}")
            # Resolution through the image's symlinks happens once, here (LoaderView): rules
            # read on_loader_path / loader_path_dirs, never compare path text.
            loader_dirs = view.dirs_finding(entry.path, is_symlink=entry.kind == SYMLINK)
            found[entry.path] = DriverLibrary(
                name=name,
                path=entry.path,
                role=role,
                version=version_from_name(name),
                on_loader_path=bool(loader_dirs),
                provenance=file_provenance(fs, entry.path) if entry.kind != SYMLINK else _symlink_provenance(entry),
                fwd_compat=note,
                is_symlink=entry.kind == SYMLINK,
                loader_path_dirs=loader_dirs,
            )
    return tuple(found[p] for p in sorted(found))


def _symlink_provenance(entry: Any) -> Provenance:
    return Provenance(kind="file", path=entry.path, via=None, layer_digest=entry.layer_digest, layer_index=entry.layer_index)


SCANNERS = {ELF_NOTES_SCANNER: ElfNoteScanner}
