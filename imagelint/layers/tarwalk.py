"""A streaming tar header scanner: the layer reader's hot path.

``tarfile`` builds a TarInfo per member and reads data through several layers of
Python; this parser looks at each 512-byte header once and skips member data
with ``readinto`` into one reused buffer (faster than tarfile over the same
stream: benchmarks/README.md). It understands what real layers contain:

  * ustar / POSIX headers (``prefix`` + ``name``) and old GNU headers;
  * GNU long names and long link names (``L``/``K``);
  * PAX extended headers (``x``) and global headers (``g``): ``path``,
    ``linkpath`` and ``size`` (other keys are ignored);
  * base-256 numeric fields (sizes over 8 GiB).

Hostile input never crashes it: a bad first header is "not a tar archive", a
bad later checksum or number is a corrupt header, a member claiming more data
than the stream holds is a "truncated layer" — all ``ImageFormatError`` naming
the layer. Names that are not UTF-8 are decoded with replacement characters
(and flagged), and extension headers are bounded in size.

As in Go's ``archive/tar`` (what Docker and containerd use) and ``tarfile``,
only regular files, contiguous files, GNU sparse files and unknown types carry
data; the size field of links, directories, devices and fifos is ignored.

Why ``tarfile`` is not the pure-Python path beside ``_tarscan.c``: it reads an extended header
whole, whatever size the header claims. A 1.1 MB gzip layer holding one 256 MiB PAX header took
``tarfile.open(mode="r|gz")`` to an 800 MB peak RSS and 11 s (Python 3.11); this walker refuses
it at ``max_extension_bytes`` (1 MiB) in 19 MB. ``tarfile`` stays the tests' oracle:
tests/layers/test_tarwalk.py compares every member kind with it, and tests/layers/test_tarscan.py
holds the C and Python paths to the same results on random and corrupted layers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, BinaryIO
from zlib import adler32

from imagelint.errors import ImageFormatError, LimitExceededError
from imagelint.untrusted import int_or_none

if TYPE_CHECKING:
    from imagelint.layers._tarscan import ScannedMember

BLOCK = 512
ZERO_BLOCK = bytes(BLOCK)
_SKIP_BUFFER = 1 << 20

# Type flags (one ASCII character).
REGULAR = "0"
HARDLINK = "1"
SYMLINK = "2"
CHAR_DEVICE = "3"
BLOCK_DEVICE = "4"
DIRECTORY = "5"
FIFO = "6"
CONTIGUOUS = "7"
GNU_LONGNAME = "L"
GNU_LONGLINK = "K"
GNU_SPARSE = "S"
PAX_LOCAL = "x"
PAX_GLOBAL = "g"
_HEADER_ONLY = frozenset({HARDLINK, SYMLINK, CHAR_DEVICE, BLOCK_DEVICE, DIRECTORY, FIFO})
_EXTENSIONS = frozenset({GNU_LONGNAME, GNU_LONGLINK, PAX_LOCAL, PAX_GLOBAL})
_POSIX_MAGIC = b"ustar\x00"
WINDOW = 1 << 20  # bytes read from the stream at a time for headers and small members
_ST_MORE = 0  # the native scanner's statuses (_tarscan.c)

_native_scan: Callable[..., tuple[list[ScannedMember], int, int, int, int]] | None
try:
    from imagelint.layers._tarscan import scan as _native_scan
except ImportError:  # not built (no compiler at install time): the Python parser does it all
    _native_scan = None

NATIVE = _native_scan is not None
# A prefilter that keeps every member (the walker's default).
RETURN_ALL: tuple = (True, {}, 1, frozenset(), frozenset(), {}, (), ())


class TarMember:
    """One real member (extension headers already applied).

    ``type`` is the tar type flag (``"0"`` for regular files, NUL normalised to
    ``"0"``). ``name_invalid`` is True when the name or link name was not UTF-8.
    ``path`` is the normalised path, when the native scanner already made it.
    (A plain slotted class: one is made per member, and ``dataclass(slots=True)``
    costs a millisecond of every start-up to build.)
    """

    __slots__ = ("name", "type", "size", "mode", "linkname", "offset", "name_invalid", "path")

    def __init__(self, name: str, type: str, size: int, mode: int, linkname: str, offset: int,
                 name_invalid: bool = False, path: str | None = None) -> None:
        self.name = name
        self.type = type
        self.size = size
        self.mode = mode
        self.linkname = linkname
        self.offset = offset
        self.name_invalid = name_invalid
        self.path = path

    def __repr__(self) -> str:
        return (f"TarMember(name={self.name!r}, type={self.type!r}, size={self.size!r}, mode={self.mode!r}, "
                f"linkname={self.linkname!r}, offset={self.offset!r}, name_invalid={self.name_invalid!r}, path={self.path!r})")


def normalize_member_path(name: str) -> str | None:
    """The normalised member path, or None when the name climbs above the root.

    ``./usr//lib/./x`` -> ``usr/lib/x``; ``/etc/passwd`` -> ``etc/passwd``;
    ``a/../b`` -> ``b``; ``../etc/passwd`` -> None; ``./`` -> ``""`` (the root).
    (``_tarscan.c`` hands back only names the fast path below takes.)
    """
    if name.startswith("./"):
        name = name[2:]  # how most layer tars spell every name
    if "/." not in name and "//" not in name and not name.startswith(("/", ".")):
        return name.rstrip("/")  # fast path: nothing to resolve
    parts: list[str] = []
    for part in name.split("/"):
        if part == "" or part == ".":
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
            continue
        parts.append(part)
    return "/".join(parts)


def _decode(raw: bytes) -> tuple[str, bool]:
    try:
        return raw.decode("utf-8"), False
    except UnicodeDecodeError:
        return raw.decode("utf-8", "replace"), True


def _byte_sum(block: bytes) -> int:
    """sum(block) for a 512-byte block, in C: ``sum()`` over bytes iterates in Python, the hot path's largest cost.

    Adler-32's low half is 1 + sum(bytes) mod 65521; a 256-byte half sums to at
    most 65280 < 65521, so each half's value is exact.
    """
    return (adler32(block[:256]) & 0xFFFF) + (adler32(block[256:]) & 0xFFFF) - 2


def _plain_raw_name(block: bytes) -> bytes:
    """A header's own name field (ustar prefix joined), no extension headers applied."""
    raw = block[0:100]
    nul = raw.find(b"\x00")
    if nul >= 0:
        raw = raw[:nul]
    if block[257:263] == _POSIX_MAGIC and block[345] != 0:
        raw = _cstring(block[345:500]) + b"/" + raw
    return raw


def _plain_name(block: bytes) -> str:
    return _plain_raw_name(block).decode("utf-8", "replace")


def _cstring(field: bytes) -> bytes:
    nul = field.find(b"\x00")
    return field if nul < 0 else field[:nul]


class TarWalker:
    """Iterate a tar stream's members; between members, read or skip the current one's data.

    Usage::

        walker = TarWalker(stream, "layer 0 (sha256:ab12…)")
        for member in walker:
            if wanted(member):
                data = walker.read_data(limit)        # or: for chunk in walker.iter_data(): ...
            # whatever is not read is skipped when the loop advances

    ``ended_cleanly`` tells, after iteration, whether an end-of-archive block was seen.

    The stream is read in windows of ``WINDOW`` bytes. When the native scanner
    (``imagelint.layers._tarscan``, built from ``_tarscan.c``) is present, the plain headers of a
    window are parsed there in one call and, given a ``prefilter`` (``RuleMatcher.prefilter``),
    only members some capture rule may want come back (plus every link, whiteout and path seen
    before, so a later member that replaces an earlier one is never missed). Every other
    header (extensions, odd numbers, non-UTF-8 names, errors) goes through the Python parser
    below, which is also the whole walk when the native scanner is not built.
    """

    def __init__(
        self,
        stream: BinaryIO,
        layer_name: str = "layer",
        max_members: int = 5_000_000,
        max_extension_bytes: int = 1 << 20,
        prefilter: tuple | None = None,
    ) -> None:
        self._stream = stream
        self._readinto: Callable[[memoryview], int] = stream.readinto  # type: ignore[attr-defined]  # every layer stream is buffered or raw: both have readinto
        self._read: Callable[[int], bytes] = stream.read
        self._layer_name = layer_name
        self._max_members = max_members
        self._max_extension_bytes = max_extension_bytes
        self._skip_buffer = memoryview(bytearray(_SKIP_BUFFER))
        # The window: one reused buffer whose first _wlen bytes are stream bytes [_wbase, _wbase +
        # _wlen); the stream itself is always at _wbase + _wlen; _cur is the walk's position.
        self._win = bytearray(WINDOW)
        self._view = memoryview(self._win)
        self._wlen = 0
        self._wbase = 0
        self._cur = 0
        self._remaining = 0  # unread data bytes of the current member
        self._next_header = 0  # stream offset of the header after the current member
        self._current: TarMember | None = None
        self._globals: dict[str, str] = {}
        self._scan = _native_scan
        self._filter = prefilter if prefilter is not None else RETURN_ALL
        self._seen: set[str] = set()
        self._batch: list[ScannedMember] = []
        self._bi = 0
        self._batch_end = 0
        self._batch_last = -1
        self._batch_status = _ST_MORE
        self.headers = 0  # headers seen, extension headers included
        self.ended_cleanly = False

    @property
    def offset(self) -> int:
        """Bytes of the stream the walk has consumed."""
        return self._cur

    # -- low-level stream access -------------------------------------------------------

    def _fill(self, view: memoryview) -> int:
        """Read into ``view`` from the stream until full or EOF; return bytes read."""
        got = 0
        total = len(view)
        while got < total:
            n = self._readinto(view[got:])
            if not n:
                break
            got += n
        return got

    def _truncated(self, what: str) -> ImageFormatError:
        return ImageFormatError(f"{self._layer_name}: truncated layer ({what} at byte {self._cur})")

    def _stream_read(self, n: int) -> bytes:
        """Up to ``n`` bytes straight from the stream (fewer only at EOF)."""
        data = self._read(n)
        if 0 < len(data) < n:  # a raw stream may return short reads
            parts = [data]
            got = len(data)
            while got < n:
                more = self._read(n - got)
                if not more:
                    break
                parts.append(more)
                got += len(more)
            data = b"".join(parts)
        return data

    def _ensure(self, n: int) -> int:
        """Make the window hold at least ``n`` (<= WINDOW) bytes from the cursor (fewer at EOF); return how many it holds."""
        have = self._wbase + self._wlen - self._cur
        if have >= n:
            return have
        pos = self._cur - self._wbase
        if have > 0:
            self._win[:have] = bytes(self._view[pos : self._wlen])  # the unread tail (< 512 bytes) to the front
        have = max(have, 0)
        got = self._fill(self._view[have:])
        self._wlen = have + got
        self._wbase = self._cur
        return self._wlen

    def _skip_to(self, target: int, name: str | None = None) -> None:
        """Move the cursor forward to stream offset ``target``, dropping what lies between unread
        (``name``: the member whose data that is, for the error if the stream ends first)."""
        end = self._wbase + self._wlen
        if target <= end:
            self._cur = target
            return
        self._cur = end
        self._wlen = 0
        self._wbase = end
        n = target - end
        buf = self._skip_buffer
        while n > 0:
            step = n if n < _SKIP_BUFFER else _SKIP_BUFFER
            got = self._fill(buf[:step])
            self._cur += got
            self._wbase = self._cur
            if got < step:
                raise self._truncated(self._claims_more(name))
            n -= step

    def _read_exact(self, n: int, what: str | Callable[[], str]) -> bytes:
        """The next ``n`` bytes at the cursor: from the window, then straight from the stream.
        ``what`` names them in the error (a function when the name costs something to make)."""
        pos = self._cur - self._wbase
        avail = self._wlen - pos
        if n <= avail:
            self._cur += n
            return bytes(self._view[pos : pos + n])
        head = bytes(self._view[pos : self._wlen]) if avail > 0 else b""
        rest = self._stream_read(n - len(head))
        data = head + rest if head else rest
        self._cur += len(data)
        self._wlen = 0
        self._wbase = self._cur
        if len(data) < n:
            raise self._truncated(what if isinstance(what, str) else what())
        return data

    # -- member data -------------------------------------------------------------------

    def read_data(self, limit: int | None = None) -> bytes:
        """The current member's next ``limit`` bytes (all remaining if None); the rest is skipped later."""
        n = self._remaining
        if limit is not None and limit < n:
            n = limit
        if n <= 0:
            return b""
        pos = self._cur - self._wbase
        if n <= self._wlen - pos:  # (the usual case, inline: a candidate's head is in the window)
            self._cur += n
            self._remaining -= n
            return bytes(self._view[pos : pos + n])
        data = self._read_exact(n, self._claims_more)
        self._remaining -= n
        return data

    def _claims_more(self, name: str | None = None) -> str:
        """The truncation message for member ``name`` (by default the current one)."""
        name = name or (self._current.name if self._current else "member")
        return f"{name!r} claims more data than the stream holds"

    def iter_data(self, chunk_size: int = 1 << 20) -> Iterator[bytes]:
        """The current member's remaining data in chunks of at most ``chunk_size`` bytes."""
        while self._remaining > 0:
            yield self.read_data(chunk_size)

    @property
    def remaining_data(self) -> int:
        """Unread data bytes of the current member."""
        return self._remaining

    def discard_data(self, n: int) -> None:
        """Drop the current member's next ``n`` bytes unread (into the reused skip buffer):
        cheaper than ``read_data``, which must hand back a new bytes object."""
        n = min(n, self._remaining)
        if n > 0:
            self._remaining -= n
            self._skip_to(self._cur + n)

    def skip_data(self) -> None:
        """Skip the rest of the current member's data and its padding."""
        self._remaining = 0
        if self._current is not None:
            self._skip_to(self._next_header)

    # -- headers -----------------------------------------------------------------------

    def _number(self, field: bytes, what: str) -> int:
        if field and field[0] & 0x80:
            # base-256 (GNU/star): 0x80 marks a positive number, 0xff a negative one.
            if field[0] == 0xFF:
                raise self._corrupt(f"negative {what}")
            value = field[0] & 0x7F
            for b in field[1:]:
                value = (value << 8) | b
            return value
        try:
            return int(field.rstrip(b"\x00 ") or b"0", 8)
        except ValueError:
            pass
        text = field.replace(b"\x00", b" ").strip()  # odd but legal padding, e.g. NUL then spaces
        try:
            return int(text or b"0", 8)
        except ValueError:
            raise self._corrupt(f"bad {what} field") from None

    def _corrupt(self, what: str) -> ImageFormatError:
        if self.headers <= 1:
            return ImageFormatError(f"{self._layer_name}: not a tar archive ({what})")
        return ImageFormatError(f"{self._layer_name}: corrupt tar header at byte {self.offset - BLOCK} ({what})")

    def _check_checksum(self, block: bytes) -> None:
        stored_field = block[148:156]
        if not stored_field.strip(b" \x00"):
            raise self._corrupt("no header checksum")
        stored = self._number(stored_field, "checksum")
        unsigned = _byte_sum(block) - sum(stored_field) + 256  # the field itself counts as 8 spaces
        if stored == unsigned:
            return
        # Some old tars computed the sum over signed chars.
        signed = unsigned - 256 * sum(1 for b in block if b > 127) + 256 * sum(1 for b in stored_field if b > 127)
        if stored != signed:
            raise self._corrupt("bad header checksum")

    def _extension_data(self, size: int, kind: str) -> bytes:
        if size > self._max_extension_bytes:
            raise LimitExceededError(
                f"{self._layer_name}: {kind} header of {size} bytes exceeds {self._max_extension_bytes} bytes"
            )
        data = self._read_exact(size, f"{kind} header")
        self._skip_to(self._cur + (-size) % BLOCK)
        return data

    def _pax_records(self, data: bytes) -> dict[str, str]:
        records: dict[str, str] = {}
        pos = 0
        end = len(data)
        while pos < end:
            if data[pos] == 0:  # some writers pad with NULs
                break
            space = data.find(b" ", pos, pos + 20)
            if space < 0 or not data[pos:space].isdigit():
                raise self._corrupt("bad pax record length")
            length = int(data[pos:space])
            record = data[space + 1 : pos + length]
            if length <= space - pos + 1 or pos + length > end or not record.endswith(b"\n") or b"=" not in record:
                raise self._corrupt("bad pax record")
            key, _, value = record[:-1].partition(b"=")
            records[key.decode("utf-8", "replace")] = value.decode("utf-8", "surrogateescape")
            pos += length
        return records

    def __iter__(self) -> Iterator[TarMember]:
        return self

    def _read_header(self) -> bytes:
        have = min(self._ensure(BLOCK), BLOCK)
        pos = self._cur - self._wbase
        block = bytes(self._view[pos : pos + have])
        self._cur += len(block)
        return block

    def _leave_current(self) -> None:
        """Past the member handed back last: what is left of its data is skipped unread."""
        self._remaining = 0
        if self._next_header <= self._wbase + self._wlen:
            self._cur = self._next_header
        else:
            self._skip_to(self._next_header)
        self._current = None

    def __next__(self) -> TarMember:
        if self._current is not None:
            self._leave_current()
        scan = self._scan
        while True:
            if self._bi < len(self._batch):
                item = self._batch[self._bi]
                self._bi += 1
                return self._scanned_member(item)
            if self._batch:
                self._batch = []
                self._bi = 0
                self._skip_past_scanned(self._batch_end, self._batch_last)
                if self._batch_status != _ST_MORE:
                    return self._parsed_member()
            if scan is None or self._globals:
                return self._parsed_member()
            if self._ensure(BLOCK) < BLOCK:
                return self._parsed_member()  # the end of the stream: the parser says how it ended
            members, pos, headers, status, last = scan(
                self._view[: self._wlen], self._cur - self._wbase, self._wbase, self._max_members - self.headers, self._filter, self._seen
            )
            self.headers += headers
            if members:
                self._batch = members
                self._batch_end = self._wbase + pos
                self._batch_last = self._wbase + last
                self._batch_status = status
                continue
            self._skip_past_scanned(self._wbase + pos, self._wbase + last if last >= 0 else -1)
            if status != _ST_MORE:
                return self._parsed_member()

    def scanned_in_window(self) -> tuple[list[ScannedMember], int, memoryview, int]:
        """The native scan's members not handed back yet, for a caller that takes some itself:
        (members, first, window, base): ``members[first:]`` are those (the batch itself, not a copy
        of its rest: a layer of links hands each back here), a member's data being
        ``window[offset + 512 - base:][:size]`` when ``offset + 512 + size <= base + len(window)``.
        Only between members (the current one's data is skipped first), and valid until the walk
        moves on; ``took_scanned(k)`` then moves the walk past the first ``k``, which must each lie
        whole in the window. None pending (``first == len(members)``): the next member is then the
        parser's, or starts a new scan."""
        if self._current is not None:
            self._leave_current()
        return self._batch, self._bi, self._view[: self._wlen], self._wbase

    def took_scanned(self, k: int) -> None:
        """Past the first ``k`` members ``scanned_in_window`` gave, their headers and data."""
        if k <= 0:
            return
        name, _, _, size, _, _, offset = self._batch[self._bi + k - 1]
        self._bi += k
        end = offset + BLOCK + size + (-size) % BLOCK
        if end > self._wbase + self._wlen:  # (only the padding after the last one's data can be past it)
            self._skip_to(end, name)  # a stream that ends in it names that member, as the walk would
        else:
            self._cur = end

    def _skip_past_scanned(self, target: int, last: int) -> None:
        """To the header after a scan; the scan's last member (maybe one not handed back) names a truncation."""
        name = None
        if target > self._wbase + self._wlen and self._wbase <= last <= self._wbase + self._wlen - BLOCK:
            self._current = None
            pos = last - self._wbase
            name = _plain_name(bytes(self._view[pos : pos + BLOCK]))
        self._skip_to(target, name)

    def _scanned_member(self, item: tuple) -> TarMember:
        name, path, type_flag, size, mode, linkname, offset = item
        member = TarMember(name, type_flag, size, mode, linkname, offset, False, path)
        start = offset + BLOCK
        if start <= self._wbase + self._wlen:  # (always, for a header the scan found in the window)
            self._cur = start
        else:
            self._skip_to(start)
        self._current = member
        self._remaining = size
        self._next_header = start + size + (-size) % BLOCK
        return member

    def _parsed_member(self) -> TarMember:
        """One member through the Python parser (extension headers applied)."""
        long_name: bytes | None = None
        long_link: bytes | None = None
        pax: dict[str, str] | None = None
        while True:
            block = self._read_header()
            if len(block) < BLOCK:
                if not block:
                    if self.headers == 0:
                        raise ImageFormatError(f"{self._layer_name}: not a tar archive (empty stream)")
                    raise StopIteration  # no end-of-archive blocks: tolerated, like tarfile and Go
                raise self._truncated("partial tar header")
            if block == ZERO_BLOCK:
                if self.headers == 0:
                    self.headers = 1
                self.ended_cleanly = True
                self._batch = []
                self._scan = None  # nothing after the end is read as members
                raise StopIteration
            self.headers += 1
            if self.headers > self._max_members:
                raise LimitExceededError(
                    f"{self._layer_name}: more than {self._max_members} tar members (per-layer limit)"
                )
            self._check_checksum(block)
            type_flag = chr(block[156]) if block[156] else REGULAR
            size = self._number(block[124:136], "size")
            if type_flag in _EXTENSIONS:
                data = self._extension_data(size, "extended")
                if type_flag == GNU_LONGNAME:
                    long_name = _cstring(data)
                elif type_flag == GNU_LONGLINK:
                    long_link = _cstring(data)
                elif type_flag == PAX_LOCAL:
                    pax = {**(pax or {}), **self._pax_records(data)}
                else:
                    for key, value in self._pax_records(data).items():
                        if value:
                            self._globals[key] = value
                        else:
                            self._globals.pop(key, None)
                continue
            member = self._member(block, type_flag, size, long_name, long_link, pax)
            if self._scan is not None:
                member.path = normalize_member_path(member.name)
                if member.path:
                    self._seen.add(member.path)  # a later plain member at this path must come back too
            return member

    def _member(
        self,
        block: bytes,
        type_flag: str,
        size: int,
        long_name: bytes | None,
        long_link: bytes | None,
        pax: dict[str, str] | None,
    ) -> TarMember:
        if self._globals:
            pax = {**self._globals, **(pax or {})}
        invalid = bad = False
        if pax and pax.get("path"):
            name, invalid = _decode(pax["path"].encode("utf-8", "surrogateescape"))
        elif long_name is not None:
            name, invalid = _decode(long_name)
        else:
            raw = _plain_raw_name(block)
            try:
                name = raw.decode("utf-8")
            except UnicodeDecodeError:
                name, invalid = raw.decode("utf-8", "replace"), True
        if pax and pax.get("linkpath"):
            linkname, bad = _decode(pax["linkpath"].encode("utf-8", "surrogateescape"))
        elif long_link is not None:
            linkname, bad = _decode(long_link)
        elif block[157] == 0:
            linkname = ""
        else:
            linkname, bad = _decode(_cstring(block[157:257]))
        if pax and pax.get("size"):
            text = pax["size"]
            pax_size = int_or_none(text, 20)  # 2**64 has 20 digits; more is no size (4,400 digits cost a traceback)
            if pax_size is None:
                raise self._corrupt("bad pax size")
            size = pax_size
        mode = self._number(block[100:108], "mode") & 0o7777
        if type_flag in _HEADER_ONLY:
            size = 0
        member = TarMember(name, type_flag, size, mode, linkname, self._cur - BLOCK, invalid or bad)
        self._current = member
        self._remaining = size
        self._next_header = self._cur + size + (-size) % BLOCK
        return member
