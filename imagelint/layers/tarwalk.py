"""A streaming tar header scanner: the layer reader's hot path.

``tarfile`` builds a TarInfo per member and reads data through several layers of
Python; this parser looks at each 512-byte header once and skips member data
with ``readinto`` into one reused buffer (measured ~1060 MB/s over isal vs
~660-790 MB/s for tarfile). It understands what real layers contain:

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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import BinaryIO, Callable, Iterator
from zlib import adler32

from imagelint.errors import ImageFormatError, LimitExceededError

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
_USUAL_CHECKSUM_ENDS = (b"\x00 ", b" \x00", b"\x00\x00", b"  ")


@dataclass(slots=True)
class TarMember:
    """One real member (extension headers already applied).

    ``type`` is the tar type flag (``"0"`` for regular files, NUL normalised to
    ``"0"``). ``name_invalid`` is True when the name or link name was not UTF-8.
    """

    name: str
    type: str
    size: int
    mode: int
    linkname: str
    offset: int
    name_invalid: bool = False


def _decode(raw: bytes) -> tuple[str, bool]:
    try:
        return raw.decode("utf-8"), False
    except UnicodeDecodeError:
        return raw.decode("utf-8", "replace"), True


def _byte_sum(block: bytes) -> int:
    """sum(block) for a 512-byte block, in C: ``sum()`` over bytes costs ~7 us, the hot path's largest cost.

    Adler-32's low half is 1 + sum(bytes) mod 65521; a 256-byte half sums to at
    most 65280 < 65521, so each half's value is exact.
    """
    return (adler32(block[:256]) & 0xFFFF) + (adler32(block[256:]) & 0xFFFF) - 2


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
    """

    def __init__(
        self,
        stream: BinaryIO,
        layer_name: str = "layer",
        max_members: int = 5_000_000,
        max_extension_bytes: int = 1 << 20,
    ) -> None:
        self._stream = stream
        self._readinto: Callable[[memoryview], int] = stream.readinto  # type: ignore[attr-defined]
        self._read: Callable[[int], bytes] = stream.read
        self._layer_name = layer_name
        self._max_members = max_members
        self._max_extension_bytes = max_extension_bytes
        self._skip_buffer = memoryview(bytearray(_SKIP_BUFFER))
        self._remaining = 0  # unread data bytes of the current member
        self._padding = 0  # padding after the current member's data
        self._current: TarMember | None = None
        self._globals: dict[str, str] = {}
        self.offset = 0  # bytes consumed from the stream
        self.headers = 0  # headers seen, extension headers included
        self.ended_cleanly = False

    # -- low-level stream access -------------------------------------------------------

    def _fill(self, view: memoryview) -> int:
        """Read into ``view`` until full or EOF; return bytes read."""
        got = 0
        total = len(view)
        while got < total:
            n = self._readinto(view[got:])
            if not n:
                break
            got += n
        self.offset += got
        return got

    def _truncated(self, what: str) -> ImageFormatError:
        return ImageFormatError(f"{self._layer_name}: truncated layer ({what} at byte {self.offset})")

    def _discard(self, n: int) -> None:
        buf = self._skip_buffer
        while n > 0:
            step = n if n < _SKIP_BUFFER else _SKIP_BUFFER
            got = self._fill(buf[:step])
            if got < step:
                name = self._current.name if self._current else "member"
                raise self._truncated(f"{name!r} claims more data than the stream holds")
            n -= step

    def _read_exact(self, n: int, what: str) -> bytes:
        # read(n) on the buffered stream fills a new bytes object straight from the
        # decompressor: one copy, where bytearray + readinto + bytes() made two.
        data = self._read(n)
        if len(data) < n:  # a raw stream may return short reads
            parts = [data]
            got = len(data)
            while got < n:
                more = self._read(n - got)
                if not more:
                    break
                parts.append(more)
                got += len(more)
            data = b"".join(parts)
        self.offset += len(data)
        if len(data) < n:
            raise self._truncated(what)
        return data

    # -- member data -------------------------------------------------------------------

    def read_data(self, limit: int | None = None) -> bytes:
        """The current member's next ``limit`` bytes (all remaining if None); the rest is skipped later."""
        n = self._remaining if limit is None else min(limit, self._remaining)
        if n <= 0:
            return b""
        name = self._current.name if self._current else "member"
        data = self._read_exact(n, f"{name!r} claims more data than the stream holds")
        self._remaining -= n
        return data

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
            self._discard(n)

    def skip_data(self) -> None:
        """Skip the rest of the current member's data and its padding."""
        n = self._remaining + self._padding
        self._remaining = self._padding = 0
        if n:
            self._discard(n)

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
        try:  # the usual spelling (six octal digits, NUL, space), in C; anything else below
            if (adler32(block[:256]) & 0xFFFF) + (adler32(block[256:]) & 0xFFFF) - sum(stored_field) + 254 == int(
                stored_field[:6], 8
            ) and stored_field[6:] in _USUAL_CHECKSUM_ENDS:
                return
        except ValueError:
            pass
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
        self._discard((-size) % BLOCK)
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
        block = self._read(BLOCK)
        while 0 < len(block) < BLOCK:  # a raw stream may return short reads
            more = self._read(BLOCK - len(block))
            if not more:
                break
            block += more
        self.offset += len(block)
        return block

    def __next__(self) -> TarMember:
        if self._remaining or self._padding:
            self.skip_data()
        self._current = None
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
            return self._member(block, type_flag, size, long_name, long_link, pax)

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
            raw = block[0:100]
            nul = raw.find(b"\x00")
            if nul >= 0:
                raw = raw[:nul]
            if block[257:263] == _POSIX_MAGIC and block[345] != 0:
                raw = _cstring(block[345:500]) + b"/" + raw
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
            if not (text.isascii() and text.isdigit()):
                raise self._corrupt("bad pax size")
            size = int(text)
        mode = self._number(block[100:108], "mode") & 0o7777
        if type_flag in _HEADER_ONLY:
            size = 0
        member = TarMember(name, type_flag, size, mode, linkname, self.offset - BLOCK, invalid or bad)
        self._current = member
        self._remaining = size
        self._padding = (-size) % BLOCK
        return member
