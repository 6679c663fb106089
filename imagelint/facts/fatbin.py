"""Compiled GPU code in an image: fatbin headers read while layers stream.

Layout read here (little-endian, packed; learned from public fatbin readers and checked
against nvcc/cuobjdump 13.0 output -- see tests/facts/test_fatbin.py):

Container header, 16 bytes, the start of an ELF ``.nv_fatbin`` section or a ``.fatbin`` file::

    0  u32 magic       0xBA55ED50
    4  u16 version     1
    6  u16 header_size 16 (the only value seen; anything else is not taken for a header)
    8  u64 fat_size    bytes of entries (headers + payloads) after this header

Entries follow back to back until ``fat_size`` is used up. Entry header, at least 64 bytes::

    0  u16 kind          1 PTX, 2 ELF (SASS cubin), 8 LTO-IR (NVVM); other values counted only
    2  u16 (format)      0x0101 in every toolkit seen
    4  u32 header_size   64, 80, 96, 112, 128...: newer toolkits append fields we do not need
    8  u64 payload_size  bytes after the header (padded, possibly compressed)
    16 u32 compressed_size
    20 u32 (unknown)
    24 u16 minor, 26 u16 major   PTX: the PTX ISA version (9.0 for CUDA 13.0); ELF: its ABI version
    28 u32 arch          SM number: 80 -> sm_80 / compute_80, 103 -> sm_103
    32 u32 name_offset, 36 u32 name_len  (the source file name in debug builds)
    40 u64 flags         0x1 64-bit, 0x2 debug, 0x10 Linux, 0x2000 / 0x8000 compressed
                         (older / CUDA 13 encodings), 0x100000 arch-specific (``sm_90a``),
                         0x200000 family-specific (``sm_100f``)
    48 u64 (zero), 56 u64 uncompressed_size

Only headers are parsed: payloads are skipped by counting, never copied or decompressed.
A magic that is not followed by a valid header (x86 code comparing against the constant,
random data) is not a container; an entry that does not fit its container ends that
container and the search resumes at the entry. The scanner keeps at most one 64-byte
header between chunks, so memory stays bounded whatever the member's size.

Which of the targets found runs on which GPU is ``imagelint.facts.gpuarch``.
"""

from __future__ import annotations

import struct
from array import array
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from imagelint.facts.elf import (
    SHT_NOBITS,
    SectionHeader,
    SectionTableCapture,
    parse_elf_header,
    read_sections,
)
from imagelint.facts.fsview import FilesystemView, file_provenance
from imagelint.facts.model import GpuCodeObject
from imagelint.layers.model import FILE, HARDLINK, CaptureRule
from imagelint.lazyre import lazy_pattern
from imagelint.untrusted import is_digits
from imagelint.versions import version_key

FATBIN_MAGIC = 0xBA55ED50
CONTAINER_HEADER_SIZE = 16
# What is searched for: the magic with the version and header size every container has
# (``_container_header`` accepts nothing else). Eight bytes that do not overlap themselves, so
# a member holds at most one candidate per 8 bytes, and the bare magic (x86 code comparing
# against it, a file of nothing but magic) is never a candidate.
_MAGIC_BYTES = struct.pack("<IHH", FATBIN_MAGIC, 1, CONTAINER_HEADER_SIZE)
# The search runs over every byte of every shared library. In C (``_hitscan.find``) it is memchr on
# the magic's 0xED, a byte rare in x86 code and data; ``bytes.find``'s skip table gains little on a
# needle holding "\0"s, the commonest byte of a binary. Same result either way.
_MAGIC_ANCHOR = 1
_native_find: Callable[[bytes, bytes, int, int], int] | None
try:
    from imagelint.facts._hitscan import find as _native_find
except ImportError:  # built without the C extension: the same search, slower
    _native_find = None


def _find_magic(buf: bytes, start: int) -> int:
    if _native_find is not None:
        return _native_find(buf, _MAGIC_BYTES, start, _MAGIC_ANCHOR)
    return buf.find(_MAGIC_BYTES, start)

ENTRY_HEADER_SIZE = 64  # the fixed part we parse; longer headers are skipped past
MAX_ENTRY_HEADER_SIZE = 4096
# A container larger than this is not one (the largest real ones are tens of MB).
MAX_FAT_SIZE = 1 << 40

KIND_PTX = 1
KIND_ELF = 2
KIND_LTO = 8
FLAG_DEBUG = 0x2
FLAGS_COMPRESSED = 0x2000 | 0x8000
FLAG_ARCH_SPECIFIC = 0x100000  # "a": sm_90a, compute_100a
FLAG_FAMILY_SPECIFIC = 0x200000  # "f": sm_100f, compute_120f

# Result format version; bump when the scan result's keys change (it lands in the layer cache).
SCAN_FORMAT = 2
SCANNER_NAME = "fatbin"

_CONTAINER = struct.Struct("<IHHQ")
_ENTRY = struct.Struct("<HHIQIIHHIIIQ")  # kind .. flags (first 48 bytes)


@dataclass(frozen=True)
class FatbinEntry:
    """One entry header of a fatbin container."""

    kind: int
    header_size: int
    payload_size: int
    arch: int
    version: tuple[int, int]
    flags: int

    @property
    def variant(self) -> str:
        if self.flags & FLAG_ARCH_SPECIFIC:
            return "a"
        if self.flags & FLAG_FAMILY_SPECIFIC:
            return "f"
        return ""

    @property
    def target(self) -> str:
        """``sm_80`` for SASS, ``compute_90a`` for PTX, ``lto_80`` for LTO-IR, ``kind4_80`` otherwise."""
        prefix = {KIND_ELF: "sm", KIND_PTX: "compute", KIND_LTO: "lto"}.get(self.kind, f"kind{self.kind}")
        return f"{prefix}_{self.arch}{self.variant}"


def _container_header(buf: bytes | memoryview, at: int = 0) -> int | None:
    """The fat_size of a valid container header at ``at``, else None.

    Every toolkit writes header_size 16; another value is a format we do not know
    (or not a header at all), so it is not taken for a container.
    """
    magic, version, header_size, fat_size = _CONTAINER.unpack_from(buf, at)
    if magic != FATBIN_MAGIC or version != 1 or header_size != CONTAINER_HEADER_SIZE or fat_size > MAX_FAT_SIZE:
        return None
    return fat_size


def _entry_header(buf: bytes | memoryview, at: int, room: int) -> FatbinEntry | None:
    """The entry at ``at`` if it is plausible and fits in the ``room`` bytes left in its container."""
    kind, _fmt, header_size, payload, _csize, _unk, minor, major, arch, _no, _nl, flags = _ENTRY.unpack_from(buf, at)
    if kind == 0 or kind & (kind - 1) or kind > 0x80:  # one bit: PTX, ELF, LTO... nothing else seen
        return None
    if not ENTRY_HEADER_SIZE <= header_size <= MAX_ENTRY_HEADER_SIZE or header_size + payload > room:
        return None
    if kind in (KIND_PTX, KIND_ELF) and not 10 <= arch < 1000:
        return None
    return FatbinEntry(kind, header_size, payload, arch, (major, minor), flags)


# Which fatbins the CUDA runtime loads. nvcc puts a translation unit's fatbin in the ELF
# section ``.nv_fatbin`` and registers it at load time (``__cudaRegisterFatBinary`` through
# the wrapper in ``.nvFatBinSegment``). A relocatable-device-code build (``-rdc=true``)
# also keeps each object's fatbin in ``__nv_relfatbin`` for the device linker (nvlink);
# the runtime never loads those, and cuobjdump does not list them. A fatbin elsewhere (an
# array in ``.rodata``) is loaded, if at all, by the library's own cuModuleLoadData call:
# counted apart, so it neither supplies nor hides a kernel. A file that is not ELF (a
# ``.fatbin``) is one container loaded whole. Checked against nvcc 13.0 and cuobjdump 13.2
# (tests/facts/test_fatbin.py).
LOADED_SECTION = ".nv_fatbin"
RELOCATABLE_SECTION = "__nv_relfatbin"
_SECTION_NAMES = (LOADED_SECTION.encode(), RELOCATABLE_SECTION.encode())
MAX_RECORDED_ENTRIES = 1 << 20  # entries placed by offset (12 bytes each); beyond, counted unplaced

# Where a container's entries land in the result.
LOADED, RELOCATABLE, ELSEWHERE, UNPLACED = "loaded", "relocatable", "elsewhere", "unplaced"
_SECTION_NAME = lazy_pattern(r"^[A-Za-z0-9_.$-]{1,64}$")


class _Summary:
    """Targets and counts of a set of entries."""

    def __init__(self) -> None:
        self.targets: dict[str, int] = {}
        self.ptx_isa: dict[str, str] = {}
        self.containers = 0
        self.compressed = 0
        self.debug = 0

    def add(self, entry: FatbinEntry, count: int = 1) -> None:
        target = entry.target
        self.targets[target] = self.targets.get(target, 0) + count
        if entry.flags & FLAGS_COMPRESSED:
            self.compressed += count
        if entry.flags & FLAG_DEBUG:
            self.debug += count
        if entry.kind == KIND_PTX:
            isa = f"{entry.version[0]}.{entry.version[1]}"
            old = self.ptx_isa.get(target)
            if old is None or version_key(isa) > version_key(old):
                self.ptx_isa[target] = isa  # the newest ISA of a target decides whether a driver can JIT it

    def merge(self, other: _Summary) -> None:
        self.containers += other.containers
        self.compressed += other.compressed
        self.debug += other.debug
        for target, n in other.targets.items():
            self.targets[target] = self.targets.get(target, 0) + n
        for target, isa in other.ptx_isa.items():
            old = self.ptx_isa.get(target)
            if old is None or version_key(isa) > version_key(old):
                self.ptx_isa[target] = isa

    def of(self, prefix: str) -> list[str]:
        return sorted((t for t in self.targets if t.startswith(prefix)), key=_target_key)

    def brief(self) -> dict[str, Any]:
        return {"containers": self.containers, "sass": self.of("sm_"), "ptx": self.of("compute_"),
                "other": self.others()}

    def others(self) -> list[str]:
        return sorted((t for t in self.targets if not t.startswith(("sm_", "compute_"))), key=_target_key)


class FatbinSummaryBuilder:
    """Collects containers and entries with their file offsets, then places each container in
    the ELF section that holds it (the section table is known only once the file has been
    read: it is at the end) and builds the JSON-serialisable scan result (shared by both parsers).

    Memory: one interned ``FatbinEntry`` per distinct header shape and 12 bytes per entry
    (``array``), at most ``MAX_RECORDED_ENTRIES``; entries beyond are counted unplaced.
    """

    def __init__(self) -> None:
        self._container_at = array("Q")  # file offset of each container
        self._entry_container = array("I")  # per entry: its container's index
        self._entry_kind = array("I")  # per entry: its index in _kinds
        self._kinds: dict[tuple[int, int, tuple[int, int], int], int] = {}
        self._kind_list: list[FatbinEntry] = []
        self._overflow = _Summary()  # entries (and containers) past the recording limit
        self.malformed = 0
        self.truncated = False

    @property
    def has_containers(self) -> bool:
        return bool(self._container_at) or self._overflow.containers > 0

    def container(self, offset: int) -> None:
        if len(self._container_at) < MAX_RECORDED_ENTRIES:
            self._container_at.append(offset)
        else:
            self._overflow.containers += 1

    def add(self, entry: FatbinEntry) -> None:
        # What the result needs of an entry (its target, ISA, flags): interned by a plain tuple,
        # so a library with tens of thousands of entries builds a handful of objects.
        key = (entry.kind, entry.arch, entry.version if entry.kind == KIND_PTX else (0, 0), entry.flags)
        k = self._kinds.get(key)
        if k is None:
            shape = FatbinEntry(entry.kind, 0, 0, entry.arch, key[2], entry.flags)
            k = self._kinds[key] = len(self._kind_list)
            self._kind_list.append(shape)
        if len(self._entry_kind) >= MAX_RECORDED_ENTRIES or self._overflow.containers:
            self._overflow.add(self._kind_list[k])
            return
        self._entry_container.append(len(self._container_at) - 1)
        self._entry_kind.append(k)

    def result(self, is_elf: bool, sections: tuple[SectionHeader, ...] | None) -> dict[str, Any]:
        groups: dict[str, _Summary] = {}
        by_section: dict[str, _Summary] = {}
        place = _placer(is_elf, sections)
        # Each container's place, interned: ``where[c]`` indexes ``places``.
        places: list[tuple[str, str | None]] = []
        index: dict[tuple[str, str | None], int] = {}
        where = array("I")
        for at in self._container_at:
            p = place(at)
            i = index.get(p)
            if i is None:
                i = index[p] = len(places)
                places.append(p)
            where.append(i)
        for (group, section), n in Counter(places[i] for i in where).items():
            groups.setdefault(group, _Summary()).containers += n
            if group in (RELOCATABLE, ELSEWHERE):
                by_section.setdefault(section or "?", _Summary()).containers += n
        # Entries counted by (place, kind) first: a few Python operations per entry, one
        # summary update per distinct pair.
        counts = Counter(zip((where[c] for c in self._entry_container), self._entry_kind))
        for (i, k), n in counts.items():
            group, section = places[i]
            groups.setdefault(group, _Summary()).add(self._kind_list[k], n)
            if group in (RELOCATABLE, ELSEWHERE):
                by_section.setdefault(section or "?", _Summary()).add(self._kind_list[k], n)
        if self._overflow.targets or self._overflow.containers:
            groups.setdefault(UNPLACED, _Summary()).merge(self._overflow)
        # What the runtime loads: .nv_fatbin (or a whole non-ELF file), plus -- when the
        # section of a container could not be known -- that container, flagged.
        loaded = _Summary()
        for group in (LOADED, UNPLACED):
            if group in groups:
                loaded.merge(groups[group])
        unplaced_group = groups.get(UNPLACED)
        return {
            "format": SCAN_FORMAT,
            "sass": loaded.of("sm_"),
            "ptx": loaded.of("compute_"),
            "other": loaded.others(),
            "ptx_isa": dict(sorted(loaded.ptx_isa.items())),
            "containers": loaded.containers,
            "entries": sum(loaded.targets.values()),
            "compressed": loaded.compressed,
            "debug": loaded.debug,
            "malformed": self.malformed,
            "truncated": self.truncated,
            "elf": is_elf,
            # Containers counted as loaded although their section is not known (an ELF file
            # whose section table could not be read): the sets above may include -rdc code.
            "unplaced": unplaced_group.containers if unplaced_group is not None else 0,
            # Containers the runtime does not load, by section: "__nv_relfatbin", ".rodata"...
            "not_loaded": {name: g.brief() for name, g in sorted(by_section.items())},
        }


def _placer(is_elf: bool, sections: tuple[SectionHeader, ...] | None) -> Callable[[int], tuple[str, str | None]]:
    """``offset -> (group, section name)`` for a container at that file offset."""
    if not is_elf:
        return lambda at: (LOADED, None)
    if sections is None:
        return lambda at: (UNPLACED, None)
    spans = sorted((s.offset, s.offset + s.size, s) for s in sections if s.size and s.type != SHT_NOBITS)
    starts = [a for a, _, _ in spans]

    def place(at: int) -> tuple[str, str | None]:
        i = bisect_right(starts, at) - 1
        # Sections do not overlap in a sane file; take the innermost that holds ``at``.
        while i >= 0:
            lo, hi, s = spans[i]
            if lo <= at < hi:
                if s.name == LOADED_SECTION:
                    return LOADED, s.name
                if s.name is None:
                    return UNPLACED, None
                if s.name == RELOCATABLE_SECTION:
                    return RELOCATABLE, s.name
                # A section name is the image's text: kept only when it looks like one (".ldata").
                plain = s.name if _SECTION_NAME.match(s.name) else ""
                return ELSEWHERE, plain or f"section {s.index}"
            i -= 1
        return ELSEWHERE, "(no section)"

    return place


def _target_key(target: str) -> tuple[str, int, str]:
    prefix, _, rest = target.partition("_")
    digits = rest.rstrip("af")
    return prefix, int(digits) if is_digits(digits) else 0, rest[len(digits):]


# Scanner states
_SEARCH, _CONTAINER_HDR, _ENTRY_HDR, _SKIP = range(4)


class FatbinScanner:
    """A ``MemberScanner``: feed a member's bytes in chunks of any size, then ``result()``.

    States: SEARCH for the magic (``_find_magic``; only a possible prefix of
    them is kept between chunks), judge a 16-byte container header or a 64-byte entry header
    (in place, or collected when a chunk edge splits it), SKIP a counted number of bytes
    (payloads, longer headers). Work is linear in the bytes fed: at most one candidate per
    8 bytes, each judged in constant time, and at most 15 bytes searched again per rejected
    header that straddled a chunk edge. A rejected header is pushed back and searched again from the position the
    one-shot ``parse_fatbins`` would resume at, so chunking never changes the result.
    Every buffer carries the file offset of its first byte, so each container is recorded
    at its offset; a ``SectionTableCapture`` fed the same bytes places it in its section
    at the end. Payload skips never swallow the bytes that capture needs.
    """

    def __init__(self) -> None:
        self._out = FatbinSummaryBuilder()
        self._elf = SectionTableCapture(_SECTION_NAMES)
        # Section names are searched only from the first container on: a file without fatbins
        # (most libraries) costs no search, and linkers put the non-alloc .shstrtab after the
        # alloc sections that hold fatbins. Missed names fall back to "unplaced", flagged.
        self._elf.searching = False
        self._state = _SEARCH
        self._held = bytearray()  # SEARCH: a magic prefix; *_HDR: the header so far
        self._held_at = 0  # file offset of _held[0]
        self._pos = 0  # file offset of the next byte fed
        self._skip = 0  # SKIP: bytes still to skip
        self._room = 0  # bytes left in the current container (from the current entry on)
        # Work done, counted: headers judged (container candidates and entry headers) and bytes
        # searched a second time (pushed back after a rejected header split by a chunk edge).
        self.candidates = 0
        self.rescanned = 0

    def feed(self, chunk: bytes) -> None:
        if chunk:
            data = bytes(chunk) if not isinstance(chunk, bytes) else chunk
            self._run(data, self._pos)
            if self._out.has_containers and not self._elf.searching:
                self._elf.start_name_search()  # this chunk included: a small file's .shstrtab may be in it
            self._elf.feed(data)
            self._pos += len(data)

    def _run(self, data: bytes, base: int) -> None:
        # A stack of (buffer, index, file offset of buffer[0]): pushed-back header bytes are
        # processed before the rest of the chunk, without copying the chunk. A header wholly
        # inside the buffer is judged where it lies; only one split by a chunk edge is held.
        stack: list[tuple[bytes, int, int]] = [(data, 0, base)]
        while stack:
            buf, i, base = stack.pop()
            n = len(buf)
            while i < n:
                state = self._state
                if state == _SKIP:
                    step = min(self._skip, n - i)
                    i += step
                    self._skip -= step
                    if self._skip == 0:
                        self._after_skip()
                elif state == _SEARCH:
                    if self._held and n - i >= len(_MAGIC_BYTES) - 1:
                        # A prefix of the search bytes held from the previous buffer: one search of
                        # the seam (what is held and the next 7 bytes) finds a candidate that starts
                        # in it; one that starts later is the plain search's.
                        h = len(self._held)
                        seam = bytes(self._held) + buf[i : i + len(_MAGIC_BYTES) - 1]
                        self.rescanned += h
                        p = seam.find(_MAGIC_BYTES)
                        if 0 <= p < h:
                            self.candidates += 1
                            self._held = bytearray(_MAGIC_BYTES)
                            self._held_at += p
                            self._state = _CONTAINER_HDR
                            i += p + len(_MAGIC_BYTES) - h
                        else:
                            self._held.clear()
                        continue
                    if self._held:
                        # The same, in a buffer too short for the seam: byte by byte.
                        self._held.append(buf[i])
                        i += 1
                        if bytes(self._held) == _MAGIC_BYTES:
                            self.candidates += 1
                            self._state = _CONTAINER_HDR
                        elif not _MAGIC_BYTES.startswith(bytes(self._held)):
                            held, held_at = bytes(self._held[1:]), self._held_at + 1
                            self._held.clear()
                            if held:  # retry from the next byte of what was held
                                self.rescanned += len(held)
                                stack.append((buf, i, base))
                                buf, i, n, base = held, 0, len(held), held_at
                        continue
                    j = _find_magic(buf, i)
                    if j < 0:
                        tail = buf[max(i, n - len(_MAGIC_BYTES) + 1):]
                        for k in range(len(tail), 0, -1):
                            if _MAGIC_BYTES.startswith(tail[-k:]):
                                self._held += tail[-k:]
                                self._held_at = base + n - k
                                break
                        i = n
                        continue
                    self.candidates += 1
                    if j + CONTAINER_HEADER_SIZE <= n:
                        fat_size = _container_header(buf, j)
                        if fat_size is None:
                            i = j + 1
                        else:
                            self._out.container(base + j)
                            self._room = fat_size
                            self._after_skip()
                            i = j + CONTAINER_HEADER_SIZE
                        continue
                    self._held += _MAGIC_BYTES
                    self._held_at = base + j
                    self._state = _CONTAINER_HDR
                    i = j + len(_MAGIC_BYTES)
                elif state == _ENTRY_HDR and not self._held and i + ENTRY_HEADER_SIZE <= n:
                    self.candidates += 1
                    if self._entry(_entry_header(buf, i, self._room)):
                        i += ENTRY_HEADER_SIZE
                    # else: the search resumes at the rejected entry
                else:
                    need = (CONTAINER_HEADER_SIZE if state == _CONTAINER_HDR else ENTRY_HEADER_SIZE) - len(self._held)
                    take = min(need, n - i)
                    if not self._held:
                        self._held_at = base + i
                    self._held += buf[i : i + take]
                    i += take
                    if take < need:
                        continue
                    if state == _ENTRY_HDR:
                        self.candidates += 1
                    pushback = self._header_complete(bytes(self._held))
                    at = self._held_at + (1 if state == _CONTAINER_HDR else 0)  # where the pushed-back bytes were
                    self._held.clear()
                    if pushback:
                        # Searched again: the part from earlier buffers on its own, then this buffer
                        # from where the header's bytes in it began (so the search is back in place).
                        earlier = pushback[: len(pushback) - take]
                        i -= take
                        self.rescanned += len(pushback)
                        if earlier:
                            stack.append((buf, i, base))
                            buf, i, n, base = earlier, 0, len(earlier), at

    def _header_complete(self, header: bytes) -> bytes:
        """Handle a complete header; return bytes to search again (a rejected header)."""
        if self._state == _CONTAINER_HDR:
            fat_size = _container_header(header)
            if fat_size is None:
                self._state = _SEARCH
                return header[1:]  # resume the search one byte after the false magic
            self._out.container(self._held_at)
            self._room = fat_size
            self._after_skip()
            return b""
        return b"" if self._entry(_entry_header(header, 0, self._room)) else header  # resume at a rejected entry

    def _entry(self, entry: FatbinEntry | None) -> bool:
        """Take an entry header (skip what follows it), or reject it (back to searching)."""
        if entry is None:
            self._out.malformed += 1
            self._room = 0
            self._state = _SEARCH
            return False
        self._out.add(entry)
        self._room -= entry.header_size + entry.payload_size
        self._skip = entry.header_size - ENTRY_HEADER_SIZE + entry.payload_size
        self._state = _SKIP
        if self._skip == 0:
            self._after_skip()
        return True

    def skippable(self) -> int:
        """Bytes ahead that would only be counted (a payload, the rest of a long header) and
        that the section-table capture does not need: the reader may drop them unread and
        call ``skipped``."""
        return min(self._skip, self._elf.droppable()) if self._state == _SKIP else 0

    def skipped(self, n: int) -> None:
        """``n`` bytes (at most ``skippable()``) went by unread."""
        if not 0 < n <= self.skippable():
            raise ValueError(f"skipped {n} bytes, but only {self.skippable()} were skippable")
        self._skip -= n
        self._pos += n
        self._elf.skipped(n)
        if self._skip == 0:
            self._after_skip()

    def _after_skip(self) -> None:
        """After a header or payload: the next entry, or back to searching."""
        if self._room == 0:
            self._state = _SEARCH
        elif self._room < ENTRY_HEADER_SIZE:
            self._out.malformed += 1  # too little room left for an entry header
            self._room = 0
            self._state = _SEARCH
        else:
            self._state = _ENTRY_HDR

    def result(self) -> dict[str, Any]:
        out = self._out
        if self._state in (_ENTRY_HDR, _SKIP) and (self._skip or self._room):
            out.truncated = True
        return out.result(bool(self._elf.is_elf), self._elf.sections())


def parse_fatbins(data: bytes) -> dict[str, Any]:
    """The same result as ``FatbinScanner`` fed ``data``, by random access (tests check they agree)."""
    out = FatbinSummaryBuilder()
    size = len(data)
    pos = 0
    is_elf = parse_elf_header(data) is not None
    sections = read_sections(data) if is_elf else None
    while True:
        at = _find_magic(data, pos)
        if at < 0 or at + CONTAINER_HEADER_SIZE > size:
            break
        fat_size = _container_header(data, at)
        if fat_size is None:
            pos = at + 1
            continue
        out.container(at)
        p, room = at + CONTAINER_HEADER_SIZE, fat_size
        while True:
            if p > size:  # the last payload runs past the end of the member
                out.truncated = True
                return out.result(is_elf, sections)
            if room == 0:
                break
            if room < ENTRY_HEADER_SIZE:
                out.malformed += 1
                break
            if p + ENTRY_HEADER_SIZE > size:
                out.truncated = True
                return out.result(is_elf, sections)
            entry = _entry_header(data, p, room)
            if entry is None:
                out.malformed += 1
                break
            out.add(entry)
            p += entry.header_size + entry.payload_size
            room -= entry.header_size + entry.payload_size
        pos = p
    return out.result(is_elf, sections)


# --- which members to scan ------------------------------------------------------------

# Shared objects (libtorch_cuda.so, libcublasLt.so.12.4.5.8, app and Python extension
# modules such as flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so) and standalone
# fatbins. ``*.so.[0-9]*`` rather than ``*.so.*`` keeps ``etc/ld.so.conf`` and
# ``ld.so.cache`` out of the scanner's way (first matching rule wins). The cost of a
# scan is a ``bytes.find`` over bytes the reader inflates anyway.
FATBIN_CAPTURE_RULES: tuple[CaptureRule, ...] = (
    CaptureRule("**/*.so", "scan", name=SCANNER_NAME),
    CaptureRule("**/*.so.[0-9]*", "scan", name=SCANNER_NAME),
    CaptureRule("**/*.fatbin", "scan", name=SCANNER_NAME),
)
SCANNERS = {SCANNER_NAME: FatbinScanner}


def gpu_code_facts(fs: FilesystemView) -> tuple[GpuCodeObject, ...]:
    """One ``GpuCodeObject`` per library file whose fatbin scan found SASS or PTX.

    Symlinks (``libcublasLt.so.12``) are not counted again; a hardlink counts once,
    as its target.
    """
    seen: set[str] = set()
    out: list[GpuCodeObject] = []
    for rule in FATBIN_CAPTURE_RULES:
        for entry in fs.glob(rule.pattern):
            if entry.kind not in (FILE, HARDLINK):
                continue
            target = fs.lookup(entry.path) if entry.kind == HARDLINK else entry
            path = target.path if target is not None else entry.path
            if path in seen:
                continue
            seen.add(path)
            scan = fs.scan(path)
            if not isinstance(scan, dict) or scan.get("format") != SCAN_FORMAT:
                continue
            obj = _code_object(path, scan, fs)
            if obj is not None:
                out.append(obj)
    return tuple(sorted(out, key=lambda o: o.path))


def _code_object(path: str, scan: dict[str, Any], fs: FilesystemView) -> GpuCodeObject | None:
    """The library's loaded code, or None when it has none (code only in ``__nv_relfatbin`` or
    ``.rodata`` is not the runtime's to load: nothing to judge)."""
    sass, ptx = tuple(scan.get("sass") or ()), tuple(scan.get("ptx") or ())
    if not (sass or ptx):
        return None
    return GpuCodeObject(path, sass, ptx, file_provenance(fs, path), **code_object_details(scan))


def code_object_details(scan: dict[str, Any]) -> dict[str, Any]:
    """The ``GpuCodeObject`` fields past path/sass/ptx/provenance, from a scan result."""
    isa = scan.get("ptx_isa") or {}
    return dict(
        ptx_isa=tuple((t, str(isa[t])) for t in scan.get("ptx") or () if t in isa),
        not_loaded=tuple(
            f"{section}: {target}"
            for section, part in (scan.get("not_loaded") or {}).items()
            for target in [*part.get("sass", ()), *part.get("ptx", ())]
        ),
        unplaced_containers=int(scan.get("unplaced") or 0),
    )
