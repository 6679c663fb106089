"""HTTP/1.1 messages on one socket: what ``imagelint.sources.http`` sends and reads.

Why not ``http.client``: importing it brings the ``email`` package (its header parser) and
``ssl`` into every run, ~5 % of a check whose layers are cached, and a registry client needs
little of it. What is here, and only this:

- a connection to an origin (TCP, then a ``CONNECT`` tunnel through an ``http://`` proxy when
  one is named, then TLS with the caller's context; ``ssl`` is imported only then);
- a request (method, target, headers, an optional body) written in one piece; names and values
  that could split the message (CR, LF, NUL, a name that is no token) are refused with
  ``ValueError``, before anything is sent;
- a response head read within bounds (a line at most ``MAX_LINE`` bytes, at most
  ``MAX_HEADERS`` header lines, at most ``MAX_INTERIM`` interim 1xx answers skipped) and its
  body framed as RFC 9112 section 6.3 says: none for HEAD, 1xx, 204 and 304; chunked when ``Transfer-Encoding`` ends in
  chunked (it wins over ``Content-Length``; a response with both is not reused); else
  ``Content-Length`` (several different values, or one that is no number, are an error); else
  to the end of the connection.

A peer that breaks the protocol raises ``HttpProtocolError``, an ``OSError``: to a caller it
is a failed connection, like a reset.
"""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:
    import ssl

MAX_LINE = 65536  # bytes in a status, header or chunk-size line (http.client's bound)
MAX_HEADERS = 100  # header lines in one response head (http.client's bound)
MAX_INTERIM = 8  # 1xx answers before the final one (http.client skips any number)
_NO_BODY_STATUSES = frozenset({204, 304})
_TOKEN_CHARS = frozenset(b"!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


class HttpProtocolError(OSError):
    """The peer's bytes are not an HTTP/1.1 response we can frame (a bad status line, header,
    length or chunk), or its body ended early."""


class IncompleteRead(HttpProtocolError):
    """The connection ended before the body did (``missing`` bytes short, when known)."""

    def __init__(self, missing: int | None) -> None:
        super().__init__(f"the body ended {missing} bytes short" if missing is not None else "the body ended early")
        self.missing = missing


class RemoteDisconnected(ConnectionResetError):
    """The connection closed without a status line: a keep-alive connection the server dropped."""


class Headers:
    """A response's header fields: case-insensitive lookup of the first value, ``in``, ``get_all``."""

    def __init__(self, fields: list[tuple[str, str]]) -> None:
        self._fields = fields
        self._first: dict[str, str] = {}
        for name, value in fields:
            self._first.setdefault(name.lower(), value)

    def get(self, name: str, default: str | None = None) -> str | None:
        return self._first.get(name.lower(), default)

    def __getitem__(self, name: str) -> str | None:
        return self._first.get(name.lower())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._first

    def get_all(self, name: str) -> list[str]:
        wanted = name.lower()
        return [value for field, value in self._fields if field.lower() == wanted]

    def items(self) -> Iterator[tuple[str, str]]:
        return iter(self._fields)

    def __repr__(self) -> str:
        return f"Headers({[name for name, _ in self._fields]!r})"


def _check_token(text: str, what: str) -> None:
    if not text or not text.isascii() or not _TOKEN_CHARS.issuperset(text.encode("ascii")):
        raise ValueError(f"invalid HTTP {what} {text[:80]!r}")


def _check_value(value: str, what: str) -> None:
    if "\r" in value or "\n" in value or "\x00" in value:
        raise ValueError(f"invalid HTTP {what}: it holds a line break or NUL")


def encode_request(method: str, target: str, headers: dict[str, str], body: bytes | None) -> bytes:
    """The request's bytes; ``ValueError`` for anything that would not be one well-formed message."""
    _check_token(method, "method")
    if not target or not target.isascii() or any(c <= " " or c == "\x7f" for c in target):
        raise ValueError(f"invalid HTTP request target {target[:80]!r}")
    lines = [f"{method} {target} HTTP/1.1"]
    for name, value in headers.items():
        _check_token(name, "header name")
        _check_value(value, f"value for header {name}")
        lines.append(f"{name}: {value}")
    given = {name.lower() for name in headers}
    if body is not None and "content-length" not in given:
        lines.append(f"Content-Length: {len(body)}")
    elif body is None and method in ("POST", "PUT", "PATCH") and "content-length" not in given:
        lines.append("Content-Length: 0")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")  # a non-Latin-1 value: UnicodeEncodeError, a ValueError
    return head + body if body else head


def host_header(host: str, port: int, default_port: int) -> str:
    """``Host``'s value: the name (an IPv6 address bracketed), with the port unless it is the default."""
    name = f"[{host}]" if ":" in host else host
    return name if port == default_port else f"{name}:{port}"


def _read_line(fp, what: str) -> bytes:
    line = fp.readline(MAX_LINE + 1)
    if len(line) > MAX_LINE:
        raise HttpProtocolError(f"{what} longer than {MAX_LINE} bytes")
    return line


def _read_fields(fp) -> list[tuple[str, str]]:
    """Header (or trailer) lines up to the blank line that ends them."""
    fields: list[tuple[str, str]] = []
    while True:
        line = _read_line(fp, "a header line")
        if not line:
            raise HttpProtocolError("the connection closed inside the response head")
        if line in (b"\r\n", b"\n"):
            return fields
        if len(fields) >= MAX_HEADERS:
            raise HttpProtocolError(f"more than {MAX_HEADERS} header lines")
        text = line.decode("latin-1").rstrip("\r\n")
        if text[:1] in (" ", "\t"):  # obsolete line folding: the previous field goes on
            if not fields:
                raise HttpProtocolError("the response head starts with a continuation line")
            name, value = fields[-1]
            fields[-1] = (name, f"{value} {text.strip()}")
            continue
        name, colon, value = text.partition(":")
        name = name.rstrip(" \t")  # "Name : value": tolerated, as http.client does
        if not colon or not name or not name.isascii() or not _TOKEN_CHARS.issuperset(name.encode("ascii")):
            raise HttpProtocolError(f"a malformed header line {text[:80]!r}")
        fields.append((name, value.strip(" \t")))


def _read_status(fp) -> tuple[int, int, str]:
    """(minor version, status, reason) of one status line."""
    line = _read_line(fp, "the status line")
    if not line:
        raise RemoteDisconnected("the connection closed without a response")
    text = line.decode("latin-1").rstrip("\r\n")
    version, _, rest = text.partition(" ")
    code, _, reason = rest.partition(" ")
    if version not in ("HTTP/1.1", "HTTP/1.0") or len(code) != 3 or not code.isascii() or not code.isdigit() or code[0] == "0":
        raise HttpProtocolError(f"not an HTTP/1.x status line: {text[:80]!r}")
    return int(version[-1]), int(code), reason.strip()


def _connection_tokens(headers: Headers) -> set[str]:
    return {t.strip().lower() for value in headers.get_all("Connection") for t in value.split(",")}


class WireResponse:
    """One response: ``status``, ``reason``, ``headers``, and the body read with ``read1``/``read``.

    ``length`` is what is left of a ``Content-Length`` body (None for a chunked one or one that
    runs to the end of the connection); ``will_close`` says the connection cannot carry another
    request; ``isclosed()`` that the body has been read to its end (or dropped).
    """

    def __init__(self, fp, method: str) -> None:
        self._fp = fp
        for _ in range(MAX_INTERIM + 1):
            minor, status, reason = _read_status(fp)
            fields = _read_fields(fp)
            if not 100 <= status < 200 or status == 101:
                break  # interim answers (100 Continue, 103 Early Hints) are skipped
        else:  # a peer that only ever says "wait" must not keep a run busy forever
            raise HttpProtocolError(f"more than {MAX_INTERIM} interim (1xx) answers")
        self.status = status
        self.reason = reason
        self.headers = Headers(fields)
        tokens = _connection_tokens(self.headers)
        self.will_close = "close" in tokens or (minor == 0 and "keep-alive" not in tokens)
        self.length: int | None = None
        self._chunked = False
        self._chunk_left = 0  # bytes left in the current chunk; 0 before a size line
        codings = [c.strip().lower() for value in self.headers.get_all("Transfer-Encoding") for c in value.split(",") if c.strip()]
        if method == "HEAD" or status in _NO_BODY_STATUSES or 100 <= status < 200:
            self.length = 0
        elif codings:
            self._chunked = codings[-1] == "chunked"
            # Any other coding last: the body runs to the close. Both framings at once is how
            # responses are smuggled: the body is read as chunked and the connection not reused.
            if not self._chunked or "Content-Length" in self.headers:
                self.will_close = True
        else:
            lengths = {v.strip() for v in self.headers.get_all("Content-Length")}
            if len(lengths) > 1:
                raise HttpProtocolError("conflicting Content-Length values")
            if lengths:
                value = lengths.pop()
                if not value.isascii() or not value.isdigit():
                    raise HttpProtocolError(f"a Content-Length that is no number: {value[:40]!r}")
                self.length = int(value)
            else:
                self.will_close = True  # the body ends when the connection does
        self._done = self.length == 0

    def isclosed(self) -> bool:
        return self._done

    def read1(self, n: int) -> bytes:
        """What one socket read brings of the body, at most ``n`` bytes; b"" at its end."""
        if self._done or n <= 0:
            return b""
        if self._chunked:
            return self._read1_chunked(n)
        if self.length is not None:
            data = self._fp.read1(min(n, self.length))
            if not data:
                raise IncompleteRead(self.length)
            self.length -= len(data)
            if not self.length:
                self._done = True
            return data
        data = self._fp.read1(n)
        if not data:
            self._done = True
        return data

    def _read1_chunked(self, n: int) -> bytes:
        if not self._chunk_left:
            line = _read_line(self._fp, "a chunk-size line")
            if not line:
                raise IncompleteRead(None)
            size = line.split(b";", 1)[0].strip()
            if not size or len(size) > 16 or any(c not in b"0123456789abcdefABCDEF" for c in size):
                raise HttpProtocolError(f"a malformed chunk size {size[:40]!r}")
            self._chunk_left = int(size, 16)
            if not self._chunk_left:
                _read_fields(self._fp)  # the trailer section, bounded like the head
                self._done = True
                return b""
        data = self._fp.read1(min(n, self._chunk_left))
        if not data:
            raise IncompleteRead(self._chunk_left)
        self._chunk_left -= len(data)
        if not self._chunk_left and self._fp.read(2) != b"\r\n":
            raise HttpProtocolError("a chunk not followed by CRLF")
        return data

    def read(self) -> bytes:
        """The rest of the body (callers bound what they call this on)."""
        parts = []
        while True:
            data = self.read1(65536)
            if not data:
                return b"".join(parts)
            parts.append(data)

    def close(self) -> None:
        self._done = True


class WireConnection:
    """One connection to ``host``:``port`` (through ``tunnel`` = an http proxy's CONNECT to the
    origin, when given), TLS with ``context`` when given."""

    def __init__(self, host: str, port: int, timeout: float, context: "ssl.SSLContext | None" = None,
                 tunnel: tuple[str, int, str | None] | None = None) -> None:
        self.host, self.port, self.timeout = host, port, timeout
        self.context = context
        self.tunnel = tunnel  # origin host, port, Proxy-Authorization
        self.sock: socket.socket | None = None
        self._fp = None
        self._method: str | None = None  # of the request sent last (HEAD answers carry no body)

    def connect(self) -> None:
        # getaddrinfo encodes a str host with the idna codec (an import); an ASCII name goes as bytes.
        host: str | bytes = self.host.encode("ascii") if self.host.isascii() else self.host
        self.sock = socket.create_connection((host, self.port), self.timeout)
        try:
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass
        server_name = self.host
        if self.tunnel is not None:
            origin, origin_port, auth = self.tunnel
            self._open_tunnel(origin, origin_port, auth)
            server_name = origin
        if self.context is not None:
            # As bytes for an ASCII name, for the same reason (ssl encodes a str one with idna).
            name: str | bytes = server_name.encode("ascii") if server_name.isascii() else server_name
            self.sock = self.context.wrap_socket(self.sock, server_hostname=name)
        self._fp = self.sock.makefile("rb")

    def _open_tunnel(self, origin: str, port: int, auth: str | None) -> None:
        assert self.sock is not None
        authority = host_header(origin, port, -1)
        headers = {"Host": authority}
        if auth:
            headers["Proxy-Authorization"] = auth
        self.sock.sendall(encode_request("CONNECT", authority, headers, None))
        fp = self.sock.makefile("rb", buffering=0)  # unbuffered: TLS must start at the first byte after the head
        try:
            _, status, reason = _read_status(_ByteReader(fp))
            _read_fields(_ByteReader(fp))
        finally:
            fp.close()
        if not 200 <= status < 300:
            raise OSError(f"Tunnel connection failed: {status} {reason[:80]}")

    def request(self, method: str, target: str, body: bytes | None, headers: dict[str, str]) -> None:
        if self.sock is None:
            raise OSError("not connected")
        self.sock.sendall(encode_request(method, target, headers, body))
        self._method = method

    def getresponse(self) -> WireResponse:
        if self._fp is None or self._method is None:
            raise OSError("not connected, or no request sent")
        return WireResponse(self._fp, self._method)

    def close(self) -> None:
        fp, self._fp = self._fp, None
        sock, self.sock = self.sock, None
        for thing in (fp, sock):
            if thing is not None:
                try:
                    thing.close()
                except OSError:
                    pass


class _ByteReader:
    """``readline`` a byte at a time on an unbuffered socket file, so that nothing past the
    proxy's answer is consumed (the TLS handshake that follows reads the socket itself)."""

    def __init__(self, raw) -> None:
        self._raw = raw

    def readline(self, limit: int) -> bytes:
        out = bytearray()
        while len(out) < limit:
            b = self._raw.read(1)
            if not b:
                break
            out += b
            if b == b"\n":
                break
        return bytes(out)
