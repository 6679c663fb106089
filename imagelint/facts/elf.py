"""ELF notes, read from a stream without holding the file.

A compat ``libcuda.so`` is ~30 MB; what we need from it is one small note
(``.note.cuda.fwd_compatibility``). ``ElfNoteScanner`` is a ``MemberScanner``
(``imagelint.layers.model``): the layer reader feeds it the member's bytes in
chunks, in order, once. It can never seek back, so it decides as bytes pass
what to keep:

* the ELF header (first 64 bytes), which says where the program headers and
  the section header table are;
* the program header table, then every ``PT_NOTE`` segment it lists;
* the section header table (near the end of the file) together with a window
  of bytes just before it, where linkers put ``.shstrtab`` (section names);
* any note record whose owner name is one of ``OWNERS`` wherever it appears
  (a note in a non-alloc section is in no segment, and the section table that
  would locate it arrives only after it has gone by).

Everything kept is bounded (``MAX_*``). ``result()`` is JSON-serialisable and
lists the notes found, with the section that holds each when the section
table says so. Nothing here executes or loads the library.
"""

from __future__ import annotations

import functools
import re
import struct
from dataclasses import dataclass
from typing import Any

ELF_MAGIC = b"\x7fELF"
PT_NOTE = 4
SHT_NOTE = 7
SHT_NOBITS = 8

# Note owners worth finding anywhere in the stream (owner names are syntax, the section
# name the facts care about comes from matrices/driver-libraries.toml).
OWNERS = (b"NVIDIA Corporation",)

MAX_RANGE = 256 * 1024          # one captured range (note segment, section table...)
MAX_TOTAL = 2 * 1024 * 1024     # all captured bytes of one member
MAX_CANDIDATES = 16             # owner-signature hits kept
SHSTRTAB_WINDOW = 64 * 1024     # bytes kept just before the section header table
MAX_NOTES = 32
MAX_DESC_CHARS = 8192
_OVERLAP = 64                   # bytes carried between chunks so a signature split by a chunk edge is found


@dataclass
class _Range:
    """A byte range of the member to keep (ELF header, a table, a note segment), filled as bytes go by."""

    start: int
    end: int
    label: str
    data: bytearray

    @property
    def complete(self) -> bool:
        return self.start + len(self.data) >= self.end


@dataclass(frozen=True)
class _Header:
    """The fields of an ELF file header that locate its program and section header tables."""

    is64: bool
    endian: str  # "<" or ">"
    phoff: int
    phentsize: int
    phnum: int
    shoff: int
    shentsize: int
    shnum: int
    shstrndx: int


def _parse_header(data: bytes) -> _Header | None:
    if len(data) < 52 or data[:4] != ELF_MAGIC or data[4] not in (1, 2) or data[5] not in (1, 2):
        return None
    is64 = data[4] == 2
    e = "<" if data[5] == 1 else ">"
    if is64:
        if len(data) < 64:
            return None
        _t, _m, _v, _entry, phoff, shoff, _f, _eh, phentsize, phnum, shentsize, shnum, shstrndx = struct.unpack_from(
            e + "HHIQQQIHHHHHH", data, 16
        )
    else:
        _t, _m, _v, _entry, phoff, shoff, _f, _eh, phentsize, phnum, shentsize, shnum, shstrndx = struct.unpack_from(
            e + "HHIIIIIHHHHHH", data, 16
        )
    return _Header(is64, e, phoff, phentsize, phnum, shoff, shentsize, shnum, shstrndx)


@dataclass(frozen=True)
class SectionHeader:
    """One row of an ELF section header table; ``name`` once the name string is known."""

    index: int
    name_index: int  # offset of the name in the section-name string table
    type: int
    offset: int
    size: int
    # None: not known; "": known only not to be any of the names a SectionTableCapture looked for
    name: str | None = None


def parse_elf_header(data: bytes) -> _Header | None:
    """The fields of an ELF file header that locate its tables, or None when ``data`` is not one."""
    return _parse_header(bytes(data[:64]))


def parse_section_headers(h: _Header, table: bytes) -> list[SectionHeader]:
    """The rows of a section header table (names not resolved); stops at the first short row."""
    fmt, size = (h.endian + "IIQQQQ", 40) if h.is64 else (h.endian + "IIIIII", 24)
    out = []
    for i in range(h.shnum):
        at = i * h.shentsize
        if h.shentsize < size or at + size > len(table):
            break
        name_idx, sh_type, _flags, _addr, offset, sh_size = struct.unpack_from(fmt, table, at)
        out.append(SectionHeader(i, name_idx, sh_type, offset, sh_size))
    return out


def _name_in(names: bytes | None, index: int) -> str | None:
    if names is None or index >= len(names):
        return None
    end = names.find(b"\x00", index)
    return names[index : end if end >= 0 else len(names)].decode("utf-8", "replace")


def read_sections(data: bytes) -> tuple[SectionHeader, ...] | None:
    """The named sections of an ELF file held whole in memory; None when not ELF or no table."""
    h = parse_elf_header(data)
    if h is None or not h.shnum or not h.shoff:
        return None
    raw = parse_section_headers(h, data[h.shoff : h.shoff + h.shnum * h.shentsize])
    if not raw:
        return None
    names = None
    if h.shstrndx < len(raw) and raw[h.shstrndx].offset + raw[h.shstrndx].size <= len(data):
        names = data[raw[h.shstrndx].offset : raw[h.shstrndx].offset + raw[h.shstrndx].size]
    return tuple(_with_name(s, _name_in(names, s.name_index)) for s in raw)


def _with_name(s: SectionHeader, name: str | None) -> SectionHeader:
    return SectionHeader(s.index, s.name_index, s.type, s.offset, s.size, name)


class SectionTableCapture:
    """The section table of an ELF file streamed once, in order, in chunks (bounded memory).

    Section headers are usually at the end of the file, after the data they describe,
    so a streaming reader learns which section an offset belongs to only at the end:
    a caller records the offsets it cares about and asks ``sections()`` once the stream
    has passed. What is kept: the ELF header; the section header table with a window
    of ``window`` bytes before it (GNU ld and strip put ``.shstrtab`` there); and,
    in the last ``NAME_WINDOW`` bytes before the table, the file offsets of the section
    names in ``names`` -- a ``.shstrtab`` outside the small window (lld puts ``.strtab``
    after it) still names those sections by matching a header's name offset against them.

    ``droppable()`` says how many bytes from the current position may go by unread
    (``skipped``) without losing any of that; bytes that go by unread, or fed while
    ``searching`` is False, are not searched for names.
    """

    MAX_TABLE = 1 << 20  # a section header table larger than this is not kept (64 bytes a row)
    MAX_NAME_HITS = 64  # per name; the last ones are kept (.shstrtab is near the end)
    NAME_WINDOW = 32 << 20  # names are searched only this far before the section header table

    def __init__(self, names: tuple[bytes, ...] = (), window: int = SHSTRTAB_WINDOW) -> None:
        self._pos = 0
        self._head = bytearray()
        self._header: _Header | None = None
        self._not_elf = False
        self._start = self._end = 0  # the captured range [start, end) once the header is known
        self._data = bytearray()
        self._window = window
        self._names = tuple(n + b"\x00" for n in names)
        self._hits: dict[bytes, list[int]] = {n: [] for n in self._names}
        self._tail = b""  # the last bytes fed, so a name split by a chunk edge is found
        self._overlap = max((len(n) for n in self._names), default=1) - 1
        self.name_hits_examined = 0  # work done, counted: name occurrences looked at
        self._anchor = names[0].decode() if names else None
        self.searching = True  # whether fed bytes are searched for the names (see ``start_name_search``)

    @property
    def is_elf(self) -> bool | None:
        """True / False once the first 64 bytes (or the whole short file) were seen; None before."""
        if self._header is not None:
            return True
        return False if self._not_elf else None

    def feed(self, chunk: bytes) -> None:
        if not chunk:
            return
        base = self._pos
        if len(self._head) < 64 and base < 64:
            self._head += chunk[: 64 - base]
            if len(self._head) >= 64:
                self._on_header()
        if self._end > self._start:
            lo, hi = max(self._start, base), min(self._end, base + len(chunk))
            if lo < hi and lo == self._start + len(self._data):
                self._data += chunk[lo - base : hi - base]
        if self._names and not self._not_elf and self.searching and self._in_name_window(base + len(chunk)):
            # The seam (the last bytes of the previous chunk + the first of this one) and then
            # the chunk itself: no copy of the chunk.
            seam = self._tail + bytes(chunk[: self._overlap])
            for name, hits in self._hits.items():
                self._find(seam, name, hits, base - len(self._tail), len(self._tail))
            self._find_in_chunk(chunk, base)
            self._tail = bytes(chunk[-self._overlap :]) if self._overlap and len(chunk) >= self._overlap else (
                (self._tail + bytes(chunk))[-self._overlap :] if self._overlap else b"")
        self._pos += len(chunk)

    def skipped(self, n: int) -> None:
        self._pos += n
        self._tail = b""

    def _in_name_window(self, end: int) -> bool:
        """Whether bytes ending at ``end`` may hold .shstrtab: linkers write it among the last
        non-alloc sections, at most ``NAME_WINDOW`` before the section header table (lld puts
        .strtab between them). A name outside is missed and its sections stay unnamed."""
        h = self._header
        return h is None or not h.shoff or end >= h.shoff - self.NAME_WINDOW

    def start_name_search(self) -> None:
        """Search the names from the next bytes fed on (a caller that created the capture with
        ``searching`` False, because it needs names only once it has seen something to place)."""
        self.searching = True

    def _find_in_chunk(self, chunk: bytes, base: int) -> None:
        """Names wholly inside ``chunk``. Only the last ``MAX_NAME_HITS`` of a name are kept, so
        each name is searched backwards from the chunk's end and at most that many are taken:
        a chunk of nothing but names costs a bounded number of steps, not one per name."""
        for name, hits in self._hits.items():
            found: list[int] = []
            end = len(chunk)
            while len(found) < self.MAX_NAME_HITS:
                j = chunk.rfind(name, 0, end)
                if j < 0:
                    break
                self.name_hits_examined += 1
                found.append(base + j)
                end = j + len(name) - 1
            if found:
                found.reverse()
                hits.extend(at for at in found if not hits or hits[-1] < at)
                del hits[: -self.MAX_NAME_HITS]

    def _find(self, buf: bytes, name: bytes, hits: list[int], base: int, before: int) -> None:
        """Record where ``name`` occurs in ``buf`` (at file offset ``base``), starting before ``before``
        when ``before`` > 0 (the seam: a hit wholly in the previous chunk was found already)."""
        i = buf.find(name)
        while i >= 0 and (before == 0 or i < before):
            at = base + i
            if not hits or hits[-1] < at:
                hits.append(at)
                if len(hits) > self.MAX_NAME_HITS:
                    del hits[0]
            i = buf.find(name, i + 1)

    def droppable(self) -> int:
        """Bytes from the current position that may go by unread."""
        if self._not_elf:
            return 1 << 62
        if self._header is None:
            return 0
        if self._pos < self._start:
            return self._start - self._pos
        return 0 if self._pos < self._end else 1 << 62

    def _on_header(self) -> None:
        h = _parse_header(bytes(self._head))
        if h is None:
            self._not_elf = True
            self._names, self._hits = (), {}
            return
        self._header = h
        size = h.shnum * h.shentsize
        if h.shnum and h.shoff >= 64 and 0 < size <= self.MAX_TABLE:
            self._start = max(64, h.shoff - self._window)
            self._end = h.shoff + size

    def sections(self) -> tuple[SectionHeader, ...] | None:
        """The section table, names resolved where known; None when not ELF or the table was not seen."""
        if self._header is None and not self._not_elf and len(self._head) >= 52:
            self._on_header()  # a 32-bit ELF shorter than 64 bytes
        h = self._header
        if h is None or self._end <= self._start:
            return None
        data = bytes(self._data)
        table_at = h.shoff - self._start
        raw = parse_section_headers(h, data[table_at : table_at + h.shnum * h.shentsize])
        if len(raw) < h.shnum:
            return None
        names = None
        if h.shstrndx < len(raw):
            s = raw[h.shstrndx]
            if self._start <= s.offset and s.offset + s.size <= self._start + len(data):
                names = data[s.offset - self._start : s.offset - self._start + s.size]
        if names is not None:
            return tuple(_with_name(s, _name_in(names, s.name_index)) for s in raw)
        # No name table: name the sections whose name offset is a recorded hit. When the
        # anchor name is found (the first of ``names``: the one whose absence matters), the
        # others are known not to bear any of the names ("" below): they sit beside it in the
        # name table. When it is not, its hit may have been lost (bytes that went by unread),
        # so every other name stays unknown.
        strtab = raw[h.shstrndx].offset if h.shstrndx < len(raw) else None
        out = []
        for s in raw:
            name = None
            if strtab is not None:
                at = strtab + s.name_index
                name = next((n[:-1].decode() for n, hits in self._hits.items() if at in hits), None)
            out.append(_with_name(s, name))
        if any(s.name == self._anchor for s in out) if self._anchor else any(s.name for s in out):
            out = [s if s.name else _with_name(s, "") for s in out]
        return tuple(out)


@functools.cache
def _note_record(endian: str, owner: bytes) -> re.Pattern[bytes]:
    """A note record whose owner is ``owner``: namesz (its length), descsz and type, then the owner."""
    return re.compile(re.escape(struct.pack(endian + "I", len(owner))) + b".{8}" + re.escape(owner), re.DOTALL)


def _align4(n: int) -> int:
    return (n + 3) & ~3


def parse_notes(data: bytes, endian: str = "<", limit: int = MAX_NOTES) -> list[tuple[int, str, int, bytes]]:
    """Note records in ``data``: (offset in data, owner, type, desc). Stops at the first malformed record."""
    out: list[tuple[int, str, int, bytes]] = []
    pos = 0
    while pos + 12 <= len(data) and len(out) < limit:
        namesz, descsz, ntype = struct.unpack_from(endian + "III", data, pos)
        name_end = pos + 12 + namesz
        desc_start = pos + 12 + _align4(namesz)
        desc_end = desc_start + descsz
        if namesz == 0 and descsz == 0 and ntype == 0:
            break  # padding
        if name_end > len(data) or desc_end > len(data):
            break
        owner = data[pos + 12 : name_end].rstrip(b"\x00").decode("utf-8", "replace")
        out.append((pos, owner, ntype, bytes(data[desc_start:desc_end])))
        pos = desc_start + _align4(descsz)
    return out


class ElfNoteScanner:
    """Streaming ``MemberScanner`` that finds ELF notes (see the module docstring)."""

    def __init__(self) -> None:
        self._pos = 0
        self._tail = b""
        self._ranges: list[_Range] = [_Range(0, 64, "ehdr", bytearray())]
        self._header: _Header | None = None
        self._phdrs_done = False
        self._not_elf = False
        self._candidates = 0
        self.signatures_examined = 0  # work done, counted: note-record shapes looked at
        self._total = 0
        self._missed: list[str] = []
        self._notes_from_segments: list[tuple[int, int]] = []  # (offset, size) of PT_NOTE segments

    # -- feeding ------------------------------------------------------------------

    def feed(self, chunk: bytes) -> None:
        if self._not_elf or not chunk:
            self._pos += len(chunk)
            return
        base = self._pos - len(self._tail)
        window = self._tail + bytes(chunk) if self._tail else bytes(chunk)
        changed = True
        while changed:
            self._copy(window, base)
            changed = self._advance()
            if self._not_elf:
                break
        if not self._not_elf:
            self._find_signatures(window, base)
            self._copy(window, base)
        self._pos += len(chunk)
        self._tail = window[-_OVERLAP:]

    def _add(self, start: int, size: int, label: str) -> None:
        size = max(0, min(size, MAX_RANGE))
        if size == 0 or self._total + size > MAX_TOTAL:
            if size:
                self._missed.append(f"{label}: capture limit")
            return
        if any(r.start == start and r.end >= start + size for r in self._ranges):
            return
        self._total += size
        self._ranges.append(_Range(start, start + size, label, bytearray()))

    def _copy(self, window: bytes, base: int) -> None:
        wend = base + len(window)
        for r in self._ranges:
            need = r.start + len(r.data)
            if need >= r.end or need >= wend:
                continue
            if need < base:
                if r.label not in self._missed:
                    self._missed.append(r.label)
                r.end = need  # what went by is gone; keep what we have
                continue
            r.data += window[need - base : min(r.end, wend) - base]

    def _advance(self) -> bool:
        """Act on ranges that just completed; True when new ranges were added."""
        added = False
        if self._header is None:
            ehdr = self._ranges[0]
            if not ehdr.complete:
                return False
            self._header = _parse_header(bytes(ehdr.data))
            if self._header is None:
                self._not_elf = True
                return False
            h = self._header
            if h.phnum and h.phentsize:
                self._add(h.phoff, h.phnum * h.phentsize, "phdrs")
            if h.shnum and h.shentsize and h.shoff:
                pre = min(SHSTRTAB_WINDOW, h.shoff)
                self._add(h.shoff - pre, pre + h.shnum * h.shentsize, "shdrs")
            return True
        if not self._phdrs_done:
            ph = next((r for r in self._ranges if r.label == "phdrs"), None)
            if ph is None or ph.complete:
                self._phdrs_done = True
                if ph is not None:
                    for offset, size in self._pt_notes(bytes(ph.data)):
                        self._notes_from_segments.append((offset, size))
                        self._add(offset, size, f"PT_NOTE@{offset}")
                        added = True
        return added

    def _pt_notes(self, data: bytes) -> list[tuple[int, int]]:
        h = self._header
        assert h is not None
        out = []
        for i in range(h.phnum):
            at = i * h.phentsize
            if h.is64:
                if at + 56 > len(data):
                    break
                p_type, _flags, p_offset, _va, _pa, p_filesz = struct.unpack_from(h.endian + "IIQQQQ", data, at)
            else:
                if at + 32 > len(data):
                    break
                p_type, p_offset, _va, _pa, p_filesz = struct.unpack_from(h.endian + "IIIII", data, at)
            if p_type == PT_NOTE and p_filesz:
                out.append((p_offset, p_filesz))
        return out

    def _find_signatures(self, window: bytes, base: int) -> None:
        h = self._header
        if h is None:
            return
        for owner in OWNERS:
            name = owner + b"\x00"
            # A note record: namesz (the owner's length, in the file's byte order), descsz, type,
            # then the owner. Searched as that whole shape, so bytes that only repeat the owner
            # (or records of another size) are passed over by the regex engine, not one by one here.
            for m in _note_record(h.endian, name).finditer(window):
                if self._candidates >= MAX_CANDIDATES:
                    break
                self.signatures_examined += 1
                offset = base + m.start()
                if any(r.start == offset for r in self._ranges):
                    continue  # seen in the previous window's overlap
                _namesz, descsz, _t = struct.unpack_from(h.endian + "III", window, m.start())
                self._candidates += 1
                self._add(offset, 12 + _align4(len(name)) + _align4(descsz), f"note@{offset}")

    # -- result -------------------------------------------------------------------

    def _bytes_at(self, offset: int, size: int) -> bytes | None:
        for r in self._ranges:
            if r.start <= offset and offset + size <= r.start + len(r.data):
                return bytes(r.data[offset - r.start : offset - r.start + size])
        return None

    def _sections(self) -> list[dict[str, Any]]:
        h = self._header
        if h is None or not h.shnum:
            return []
        table = self._bytes_at(h.shoff, h.shnum * h.shentsize)
        if table is None:
            return []
        raw = parse_section_headers(h, table)
        names = None
        if h.shstrndx < len(raw):
            names = self._bytes_at(raw[h.shstrndx].offset, raw[h.shstrndx].size)
        return [
            {"name": _name_in(names, s.name_index), "type": s.type, "offset": s.offset, "size": s.size} for s in raw
        ]

    def result(self) -> dict[str, Any]:
        if self._not_elf or self._header is None:
            return {"elf": False, "notes": [], "missed": []}
        h = self._header
        sections = self._sections()

        def section_of(offset: int) -> str | None:
            for s in sections:
                if s["type"] != SHT_NOBITS and s["size"] and s["offset"] <= offset < s["offset"] + s["size"] and s["name"]:
                    return s["name"]
            return None

        found: dict[int, dict[str, Any]] = {}
        blocks: list[tuple[int, int]] = list(self._notes_from_segments)
        blocks += [(s["offset"], s["size"]) for s in sections if s["type"] == SHT_NOTE]
        blocks += [(r.start, len(r.data)) for r in self._ranges if r.label.startswith("note@")]
        for start, size in blocks:
            data = self._bytes_at(start, size)
            if data is None:
                continue
            for rel, owner, ntype, desc in parse_notes(data, h.endian):
                offset = start + rel
                if offset in found or len(found) >= MAX_NOTES:
                    continue
                found[offset] = {
                    "offset": offset,
                    "section": section_of(offset),
                    "owner": owner,
                    "type": ntype,
                    "desc": desc.rstrip(b"\x00").decode("utf-8", "replace")[:MAX_DESC_CHARS],
                }
        return {
            "elf": True,
            "class": 64 if h.is64 else 32,
            "notes": [found[k] for k in sorted(found)],
            "missed": list(self._missed),
        }


def scan_elf_notes(data: bytes, chunk_size: int = 1 << 16) -> dict[str, Any]:
    """Run ``ElfNoteScanner`` over bytes in memory (tests, and files captured whole)."""
    scanner = ElfNoteScanner()
    for i in range(0, len(data), chunk_size):
        scanner.feed(data[i : i + chunk_size])
    return scanner.result()
