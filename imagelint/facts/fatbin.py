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
from dataclasses import dataclass
from typing import Any

from imagelint.facts.common import FilesystemView, file_provenance
from imagelint.facts.model import GpuCodeObject
from imagelint.layers.model import FILE, HARDLINK, CaptureRule

FATBIN_MAGIC = 0xBA55ED50
_MAGIC_BYTES = struct.pack("<I", FATBIN_MAGIC)
CONTAINER_HEADER_SIZE = 16
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
SCAN_FORMAT = 1
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


class FatbinSummaryBuilder:
    """Accumulates entries into the JSON-serialisable scan result (shared by both parsers)."""

    def __init__(self) -> None:
        self.targets: dict[str, int] = {}
        self.ptx_isa: dict[str, str] = {}
        self.containers = 0
        self.compressed = 0
        self.debug = 0
        self.malformed = 0
        self.truncated = False

    def add(self, entry: FatbinEntry) -> None:
        target = entry.target
        self.targets[target] = self.targets.get(target, 0) + 1
        if entry.flags & FLAGS_COMPRESSED:
            self.compressed += 1
        if entry.flags & FLAG_DEBUG:
            self.debug += 1
        if entry.kind == KIND_PTX:
            isa = f"{entry.version[0]}.{entry.version[1]}"
            old = self.ptx_isa.get(target)
            if old is None or _version_key(isa) > _version_key(old):
                self.ptx_isa[target] = isa

    def result(self) -> dict[str, Any]:
        def of(prefix: str) -> list[str]:
            return sorted((t for t in self.targets if t.startswith(prefix)), key=_target_key)

        return {
            "format": SCAN_FORMAT,
            "sass": of("sm_"),
            "ptx": of("compute_"),
            "other": sorted((t for t in self.targets if not t.startswith(("sm_", "compute_"))), key=_target_key),
            "ptx_isa": dict(sorted(self.ptx_isa.items())),
            "containers": self.containers,
            "entries": sum(self.targets.values()),
            "compressed": self.compressed,
            "debug": self.debug,
            "malformed": self.malformed,
            "truncated": self.truncated,
        }


def _version_key(v: str) -> tuple[int, ...]:
    return tuple(int(p) for p in v.split("."))


def _target_key(target: str) -> tuple[str, int, str]:
    prefix, _, rest = target.partition("_")
    digits = rest.rstrip("af")
    return prefix, int(digits) if digits.isdigit() else 0, rest[len(digits):]


# Scanner states
_SEARCH, _CONTAINER_HDR, _ENTRY_HDR, _SKIP = range(4)


class FatbinScanner:
    """A ``MemberScanner``: feed a member's bytes in chunks of any size, then ``result()``.

    States: SEARCH for the magic (``bytes.find``; only a possible magic prefix is kept
    between chunks), collect a 16-byte container header or a 64-byte entry header
    (bytes kept only until complete), SKIP a counted number of bytes (payloads, longer
    headers). A rejected header is pushed back and searched again from the position the
    one-shot ``parse_fatbins`` would resume at, so chunking never changes the result.
    """

    def __init__(self) -> None:
        self._out = FatbinSummaryBuilder()
        self._state = _SEARCH
        self._held = bytearray()  # SEARCH: a magic prefix; *_HDR: the header so far
        self._skip = 0  # SKIP: bytes still to skip
        self._room = 0  # bytes left in the current container (from the current entry on)

    def feed(self, chunk: bytes) -> None:
        if chunk:
            self._run(bytes(chunk) if not isinstance(chunk, bytes) else chunk)

    def _run(self, data: bytes) -> None:
        # A stack of (buffer, index): pushed-back header bytes are processed before the
        # rest of the chunk, without copying the chunk.
        stack: list[tuple[bytes, int]] = [(data, 0)]
        while stack:
            buf, i = stack.pop()
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
                    if self._held:
                        # A magic prefix from the previous buffer: complete it byte by byte.
                        self._held.append(buf[i])
                        i += 1
                        if bytes(self._held) == _MAGIC_BYTES:
                            self._state = _CONTAINER_HDR
                        elif not _MAGIC_BYTES.startswith(bytes(self._held)):
                            held = bytes(self._held[1:])
                            self._held.clear()
                            if held:  # retry from the next byte of what was held
                                stack.append((buf, i))
                                buf, i, n = held, 0, len(held)
                        continue
                    j = buf.find(_MAGIC_BYTES, i)
                    if j >= 0:
                        self._held += _MAGIC_BYTES
                        self._state = _CONTAINER_HDR
                        i = j + 4
                        continue
                    tail = buf[max(i, n - 3):]
                    for k in range(len(tail), 0, -1):
                        if _MAGIC_BYTES.startswith(tail[-k:]):
                            self._held += tail[-k:]
                            break
                    i = n
                else:
                    need = (CONTAINER_HEADER_SIZE if state == _CONTAINER_HDR else ENTRY_HEADER_SIZE) - len(self._held)
                    take = min(need, n - i)
                    self._held += buf[i : i + take]
                    i += take
                    if take < need:
                        continue
                    pushback = self._header_complete(bytes(self._held))
                    self._held.clear()
                    if pushback:
                        stack.append((buf, i))
                        buf, i, n = pushback, 0, len(pushback)

    def _header_complete(self, header: bytes) -> bytes:
        """Handle a complete header; return bytes to search again (a rejected header)."""
        if self._state == _CONTAINER_HDR:
            fat_size = _container_header(header)
            if fat_size is None:
                self._state = _SEARCH
                return header[1:]  # resume the search one byte after the false magic
            self._out.containers += 1
            self._room = fat_size
            self._after_skip()
            return b""
        entry = _entry_header(header, 0, self._room)
        if entry is None:
            self._out.malformed += 1
            self._room = 0
            self._state = _SEARCH
            return header  # the search resumes at the rejected entry
        self._out.add(entry)
        self._room -= entry.header_size + entry.payload_size
        self._skip = entry.header_size - ENTRY_HEADER_SIZE + entry.payload_size
        self._state = _SKIP
        if self._skip == 0:
            self._after_skip()
        return b""

    def skippable(self) -> int:
        """Bytes ahead that would only be counted (a payload, the rest of a long header):
        the reader may drop them unread and call ``skipped``."""
        return self._skip if self._state == _SKIP else 0

    def skipped(self, n: int) -> None:
        """``n`` bytes (at most ``skippable()``) went by unread."""
        if self._state != _SKIP or not 0 < n <= self._skip:
            raise ValueError(f"skipped {n} bytes, but only {self.skippable()} were skippable")
        self._skip -= n
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
        return out.result()


def parse_fatbins(data: bytes) -> dict[str, Any]:
    """The same result as ``FatbinScanner`` fed ``data``, by random access (tests check they agree)."""
    out = FatbinSummaryBuilder()
    size = len(data)
    pos = 0
    while True:
        at = data.find(_MAGIC_BYTES, pos)
        if at < 0 or at + CONTAINER_HEADER_SIZE > size:
            break
        fat_size = _container_header(data, at)
        if fat_size is None:
            pos = at + 1
            continue
        out.containers += 1
        p, room = at + CONTAINER_HEADER_SIZE, fat_size
        while True:
            if p > size:  # the last payload runs past the end of the member
                out.truncated = True
                return out.result()
            if room == 0:
                break
            if room < ENTRY_HEADER_SIZE:
                out.malformed += 1
                break
            if p + ENTRY_HEADER_SIZE > size:
                out.truncated = True
                return out.result()
            entry = _entry_header(data, p, room)
            if entry is None:
                out.malformed += 1
                break
            out.add(entry)
            p += entry.header_size + entry.payload_size
            room -= entry.header_size + entry.payload_size
        pos = p
    return out.result()


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
            sass, ptx = tuple(scan.get("sass") or ()), tuple(scan.get("ptx") or ())
            if sass or ptx:
                out.append(GpuCodeObject(path, sass, ptx, file_provenance(fs, path)))
    return tuple(sorted(out, key=lambda o: o.path))
