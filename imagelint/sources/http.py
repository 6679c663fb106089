"""The retrying HTTP layer under the registry source, on HTTP/1.1 of its own (``imagelint.sources.wire``).

One ``HttpTransport`` per registry client. It owns the retry policy (429 with
``Retry-After``, 500/502/503/504, connection errors, resets and read timeouts,
exponential backoff with jitter), the per-request TLS choice (verify with the default
CA bundle, with ``--ca-cert``, or not at all for an ``--insecure-registry``; never
``REQUESTS_CA_BUNDLE`` or ``SSL_CERT_FILE`` behind the user's back), bounded
``(connect, read)`` timeouts, and redirects, which it follows itself so that an
``Authorization`` header never leaves the host it was meant for. It also counts and
logs requests, so tests can assert how many a check cost.

Why not ``requests``: importing requests and urllib3 costs ~45 ms of every run (a
second image's whole check is ~0.25 s), and what the registry protocol needs from HTTP
is small; not ``http.client`` either, which imports the ``email`` package and ``ssl`` (the
latter is imported here only for an https URL). What this module does, it does on purpose: HTTP/1.1 keep-alive connections
pooled per origin and TLS choice (a few per origin, shared by the layer workers); no
``~/.netrc``; no cookies (RFC 6265 cookies ignore the port, so a registry's cookie would
reach any other service on its host; no registry protocol needs one); the proxy
variables ``HTTP_PROXY``/``HTTPS_PROXY``/``ALL_PROXY``/``NO_PROXY`` honoured per request
(``http://`` proxies: ``CONNECT`` tunnels for https); bodies never decoded behind the
caller's back (``read_capped`` undoes ``Content-Encoding`` within its cap, and a blob
must come as sent: its digest is checked on the bytes received).

Nothing here knows about registries: callers turn a final bad status or a
``TransportFailure`` into their own one-line error.
"""

from __future__ import annotations

import os
import re
import select
import socket
import sys
import threading
import time
from typing import TYPE_CHECKING, Callable, Iterable, Mapping
from urllib.parse import urlencode, urljoin, urlsplit

import imagelint
from dataclasses import dataclass
from imagelint.sources.wire import RemoteDisconnected, WireConnection, WireResponse, host_header

if TYPE_CHECKING:
    import ssl

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
MAX_REDIRECTS = 5
RETRY_AFTER_CAP = 30.0  # seconds; a registry asking for longer is treated as this
BACKOFF_CAP = 30.0
SENSITIVE_HEADERS = ("authorization", "cookie", "proxy-authorization")
NOT_RETRYABLE = frozenset({"tls", "redirect", "invalid", "deadline"})  # retrying cannot change the outcome
USER_AGENT = f"imagelint/{imagelint.__version__}"
# Only the encodings read_capped decodes itself, within its bound (not brotli or zstd).
DEFAULT_HEADERS = {"User-Agent": USER_AGENT, "Accept": "*/*", "Accept-Encoding": "gzip, deflate"}
MAX_IDLE_PER_ORIGIN = 4  # idle keep-alive connections kept per origin
DRAIN_LIMIT = 64 * 1024  # an unread body up to this is read at close, to keep the connection
DRAIN_TIMEOUT = 0.05  # seconds: how long closing waits for such a body's bytes


@dataclass(frozen=True)
class RequestRecord:
    """One request as sent (query string dropped: presigned URLs carry secrets there)."""

    method: str
    url: str
    status: int | None  # None when no response came back
    authorized: bool


class TransportFailure(Exception):
    """No usable response: connection refused/reset, timeout, TLS failure, too many redirects.

    ``kind`` is ``tls``, ``timeout``, ``connection``, ``redirect``, ``invalid`` or ``deadline``
    (the run's ``--deadline``, ``imagelint.deadline``); ``detail`` is
    the underlying reason (not yet redacted: callers redact).
    """

    def __init__(self, kind: str, detail: str, attempts: int) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail
        self.attempts = attempts


VerifyChooser = Callable[[str], "bool | str"]


def same_origin(a: str, b: str) -> bool:
    """Scheme, host and port all equal: only then may credentials follow a redirect."""
    sa, sb = urlsplit(a), urlsplit(b)
    return (sa.scheme, sa.hostname, sa.port) == (sb.scheme, sb.hostname, sb.port)


def strip_query(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


def retry_after_seconds(value: str | None) -> float | None:
    """``Retry-After`` as seconds (delta-seconds or an HTTP date), or None if absent/garbled."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    import email.utils  # an HTTP date: rare (a 429 that says when), and the email package is not light

    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


class Response:
    """One HTTP response: ``status_code``, ``headers`` (case-insensitive; a missing name gives
    None), ``url`` (the URL this response answers) and the body as a stream, read with
    ``read1`` (what one socket read brings, at most n). ``close()`` hands a fully read
    keep-alive connection back to its pool and closes any other."""

    def __init__(self, url: str, raw: WireResponse, conn: WireConnection,
                 pool: "_ConnectionPool", key: tuple) -> None:
        self.url = url
        self.status_code = raw.status
        self.headers = raw.headers
        self._raw = raw
        self._conn: WireConnection | None = conn
        self._pool = pool
        self._key = key

    @property
    def content_encoding(self) -> str:
        """The body's ``Content-Encoding``, lower-case; ``identity`` when none is named."""
        return (self.headers.get("Content-Encoding") or "").strip().lower() or "identity"

    def read1(self, n: int) -> bytes:
        return self._raw.read1(n)  # a body that ends early raises wire.IncompleteRead

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        raw = self._raw
        if not raw.isclosed() and not raw.will_close and raw.length is not None and raw.length <= DRAIN_LIMIT:
            # A short unread body (a 401, a redirect): read it if it is already there, so the
            # connection stays usable; a body still dripping in is not waited for.
            try:
                if conn.sock is not None:
                    conn.sock.settimeout(DRAIN_TIMEOUT)
                raw.read()
            except OSError:  # wire's protocol errors included
                pass
        if raw.isclosed() and not raw.will_close:  # body read to its end: the connection is reusable
            self._pool.give(self._key, conn)
        else:
            raw.close()
            conn.close()

    def __enter__(self) -> "Response":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class HttpTransport:
    """Requests with retries, explicit TLS, manual redirects and a request log."""

    def __init__(
        self,
        verify_for: VerifyChooser,
        timeout: float,
        retries: int,
        backoff: float,
        on_request: Callable[[RequestRecord], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._verify_for = verify_for
        # Connect fails fast; the read timeout is the gap allowed between bytes, not the whole body.
        self.timeout = (min(timeout, 10.0), timeout)
        self.retries = max(0, retries)
        self.backoff = max(0.0, backoff)
        self.log: list[RequestRecord] = []
        self.gave_up_waiting: float | None = None  # the last Retry-After not waited for
        self._on_request = on_request
        self._sleep = sleep
        self._pool = _ConnectionPool()
        self._contexts = _TlsContexts()

    @property
    def requests_made(self) -> int:
        return len(self.log)

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Exponential backoff with full jitter; a server's Retry-After wins, capped."""
        if retry_after is not None:
            return min(retry_after, RETRY_AFTER_CAP)
        import random  # only a retry pays for it (~1 ms of start-up otherwise)

        ceiling = min(BACKOFF_CAP, self.backoff * (2**attempt))
        return ceiling / 2 + random.uniform(0, ceiling / 2)

    def may_wait(self, attempt: int, retry_after: float | None = None) -> bool:
        """Whether a retry's wait fits: a Retry-After beyond ``--timeout`` (or the cap) is not
        honoured, and no wait may run past the run's deadline."""
        from imagelint import deadline

        if retry_after is not None and retry_after > min(RETRY_AFTER_CAP, self.timeout[1]):
            return False
        left = deadline.remaining()
        return left is None or self.delay(attempt, retry_after) < left

    def pause(self, attempt: int, retry_after: float | None = None) -> None:
        from imagelint import deadline

        wait = self.delay(attempt, retry_after)
        left = deadline.remaining()
        self._sleep(wait if left is None else max(0.0, min(wait, left)))

    def request(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str] | None = None,
        *,
        data: Mapping[str, str] | None = None,
        retry_statuses: Iterable[int] = RETRY_STATUSES,
    ) -> Response:
        """Send with retries; return the final response (maybe an error status), body unread.

        Raises TransportFailure when no response could be had within the bound.
        The caller owns (and must close) the returned response.
        """
        retry_on = frozenset(retry_statuses)
        attempt = 0
        while True:
            try:
                response = self._follow_redirects(method, url, dict(headers or {}), data)
            except TransportFailure as failure:
                if failure.kind in NOT_RETRYABLE or attempt >= self.retries or not self.may_wait(attempt):
                    failure.attempts = attempt + 1
                    raise
                self.pause(attempt)
                attempt += 1
                continue
            if response.status_code in retry_on and attempt < self.retries:
                retry_after = retry_after_seconds(response.headers.get("Retry-After")) if response.status_code == 429 else None
                if not self.may_wait(attempt, retry_after):
                    self.gave_up_waiting = retry_after
                    return response
                response.close()
                self.pause(attempt, retry_after)
                attempt += 1
                continue
            return response

    def _follow_redirects(self, method: str, url: str, headers: dict[str, str], data: Mapping[str, str] | None) -> Response:
        origin = url
        for _ in range(MAX_REDIRECTS + 1):
            response = self._send_once(method, url, headers, data)
            if response.status_code not in REDIRECT_STATUSES or "Location" not in response.headers:
                return response
            target = urljoin(url, response.headers["Location"])
            response.close()
            if not same_origin(origin, target):
                # Storage behind a registry (S3, a CDN) gets a presigned URL, never our credentials.
                headers = {k: v for k, v in headers.items() if k.lower() not in SENSITIVE_HEADERS}
            if response.status_code == 303:
                method, data = "GET", None
            url = target
        raise TransportFailure("redirect", f"more than {MAX_REDIRECTS} redirects", 1)

    def _send_once(self, method: str, url: str, headers: dict[str, str], data: Mapping[str, str] | None) -> Response:
        from imagelint import deadline

        authorized = any(k.lower() == "authorization" for k in headers)
        left = deadline.remaining()
        if left is not None and left <= 0:
            raise TransportFailure("deadline", "the run reached its deadline (--deadline)", 1)
        connect_timeout, read_timeout = self.timeout if left is None else (min(self.timeout[0], left), min(self.timeout[1], left))
        try:
            target = _Target.of(url, self._verify_for(url), self._contexts)
        except ValueError as exc:
            self._record(method, url, None, authorized)
            raise TransportFailure("invalid", str(exc), 1) from None
        body = urlencode(data).encode() if data is not None else None
        given = {name.lower() for name in headers}
        request_headers = {k: v for k, v in DEFAULT_HEADERS.items() if k.lower() not in given}
        request_headers.update(headers)
        if body is not None:
            request_headers["Content-Type"] = "application/x-www-form-urlencoded"
        if "host" not in given:
            request_headers["Host"] = target.host_header
        if target.proxy is not None and target.proxy[2] and target.scheme == "http":
            request_headers["Proxy-Authorization"] = target.proxy[2]
        try:
            response = self._exchange(target, method, request_headers, body, connect_timeout, read_timeout)
        except OSError as exc:
            self._record(method, url, None, authorized)
            raise self._failure(exc) from None
        except ValueError as exc:  # a header or URL that cannot be sent as one well-formed message
            self._record(method, url, None, authorized)
            raise TransportFailure("invalid", _reason(exc), 1) from None
        self._record(method, url, response.status_code, authorized)
        return response

    @staticmethod
    def _failure(exc: OSError) -> TransportFailure:
        from imagelint import deadline

        if _is_tls_error(exc):  # certificate checks included (SSLCertVerificationError)
            return TransportFailure("tls", _reason(exc), 1)
        if isinstance(exc, (socket.timeout, TimeoutError)):
            left = deadline.remaining()
            if left is not None and left <= 0.05:
                return TransportFailure("deadline", "the run reached its deadline (--deadline)", 1)
            return TransportFailure("timeout", _reason(exc) or "timed out", 1)
        return TransportFailure("connection", _reason(exc), 1)

    def _exchange(self, target: "_Target", method: str, headers: dict[str, str], body: bytes | None,
                  connect_timeout: float, read_timeout: float) -> Response:
        """One request and its response head, on a pooled connection when one is idle. A pooled
        connection the server has closed meanwhile fails before any answer: then a new one is
        used, once (the request was not seen, so this is no retry)."""
        for reused in (True, False):
            conn = self._pool.take(target.key) if reused else None
            if reused and conn is None:
                continue
            try:
                if conn is None:
                    conn = target.connection(connect_timeout)
                    conn.connect()  # TCP, then the proxy tunnel and TLS when there are any
            except BaseException:
                if conn is not None:
                    conn.close()  # a socket connected before the handshake failed
                raise
            assert conn.sock is not None
            conn.sock.settimeout(read_timeout)
            try:
                conn.request(method, target.request_target, body=body, headers=headers)
                raw = conn.getresponse()
            except (RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                conn.close()
                if reused:
                    continue
                raise
            except BaseException:
                conn.close()
                raise
            return Response(target.url, raw, conn, self._pool, target.key)
        raise AssertionError("unreachable")  # pragma: no cover

    def _record(self, method: str, url: str, status: int | None, authorized: bool) -> None:
        record = RequestRecord(method, strip_query(url), status, authorized)
        self.log.append(record)
        if self._on_request:
            self._on_request(record)


class _ConnectionPool:
    """Idle keep-alive connections by origin, TLS choice and proxy; shared by the worker threads."""

    def __init__(self) -> None:
        self._idle: dict[tuple, list[WireConnection]] = {}
        self._lock = threading.Lock()

    def take(self, key: tuple) -> WireConnection | None:
        while True:
            with self._lock:
                idle = self._idle.get(key)
                conn = idle.pop() if idle else None
            if conn is None:
                return None
            if _still_open(conn):
                return conn
            conn.close()

    def give(self, key: tuple, conn: WireConnection) -> None:
        with self._lock:
            idle = self._idle.setdefault(key, [])
            if len(idle) < MAX_IDLE_PER_ORIGIN:
                idle.append(conn)
                return
        conn.close()


def _still_open(conn: WireConnection) -> bool:
    """An idle connection has nothing to read; if its socket is readable the server closed it
    (or sent bytes nobody asked for): either way it cannot carry another request."""
    sock = conn.sock
    if sock is None:
        return False
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return False
    return not readable


@dataclass(frozen=True)
class _Target:
    """Where one URL's request goes: the origin, the TLS context, and the proxy if any."""

    url: str
    scheme: str
    host: str
    port: int
    request_target: str  # the path and query, or the whole URL when sent to an http proxy
    host_header: str
    context: ssl.SSLContext | None
    proxy: tuple[str, int, str | None] | None  # host, port, Proxy-Authorization

    @property
    def key(self) -> tuple:
        return (self.scheme, self.host, self.port, id(self.context), self.proxy)

    @classmethod
    def of(cls, url: str, verify: bool | str, contexts: "_TlsContexts") -> "_Target":
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https"):
            raise ValueError(f"not an http(s) URL: {strip_query(url)[:200]!r}")
        host = parts.hostname
        if not host:
            raise ValueError(f"no host in URL {strip_query(url)[:200]!r}")
        port = parts.port or (443 if scheme == "https" else 80)  # a bad port raises ValueError
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        context = contexts.get(verify) if scheme == "https" else None
        proxy = _proxy_for(scheme, host, port)
        # An http:// request through a proxy names the whole URL; https goes through a CONNECT tunnel.
        request_target = url.split("#", 1)[0] if proxy is not None and scheme == "http" else path
        host_value = host_header(host, port, 443 if scheme == "https" else 80)
        return cls(url, scheme, host, port, request_target, host_value, context, proxy)

    def connection(self, connect_timeout: float) -> WireConnection:
        if self.proxy is not None:
            proxy_host, proxy_port, proxy_auth = self.proxy
            if self.scheme == "https":  # a CONNECT tunnel to the origin, then TLS inside it
                return WireConnection(proxy_host, proxy_port, connect_timeout, self.context, (self.host, self.port, proxy_auth))
            # Proxy-Authorization goes with each request (``_send_once``)
            return WireConnection(proxy_host, proxy_port, connect_timeout)
        return WireConnection(self.host, self.port, connect_timeout, self.context)


class _TlsContexts:
    """One context per TLS choice, built on first use (loading a CA bundle costs tens of ms).

    ``True``: the CA bundle requests uses (certifi's, when installed) or else the system
    store; a path: that CA file only (``--ca-cert``); ``False``: no verification, and no CA
    store read at all (``--insecure-registry``).
    """

    def __init__(self) -> None:
        self._made: dict[bool | str, ssl.SSLContext] = {}
        self._lock = threading.Lock()

    def get(self, verify: bool | str) -> ssl.SSLContext:
        import ssl  # only for an https URL: a plain-HTTP registry never pays for it

        with self._lock:
            context = self._made.get(verify)
            if context is None:
                if verify is False:
                    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
                    context.check_hostname = False
                    context.verify_mode = ssl.CERT_NONE
                else:
                    context = ssl.create_default_context(cafile=_default_ca_bundle() if verify is True else str(verify))
                context.set_alpn_protocols(["http/1.1"])
                self._made[verify] = context
            return context


def _default_ca_bundle() -> str | None:
    try:
        import certifi
    except ImportError:  # the system store, then
        return None
    return certifi.where()


_PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy")


def _proxy_for(scheme: str, host: str, port: int) -> tuple[str, int, str | None] | None:
    """The proxy the environment names for this request (lower-case variables first, as
    curl and requests read them), unless ``NO_PROXY`` exempts the host."""
    if not any(k.lower() in _PROXY_VARIABLES for k in os.environ):
        return None
    import urllib.request

    proxies = urllib.request.getproxies_environment()
    url = proxies.get(scheme) or proxies.get("all")
    if not url:
        return None
    netloc = host if ":" not in host else f"[{host}]"
    if urllib.request.proxy_bypass_environment(f"{netloc}:{port}", proxies) or urllib.request.proxy_bypass_environment(netloc, proxies):
        return None
    parts = urlsplit(url if "://" in url else f"http://{url}")
    if parts.scheme.lower() != "http":
        raise ValueError(f"the {scheme} proxy {parts.scheme}://{parts.hostname} is not an http:// proxy, which is all imagelint speaks")
    if not parts.hostname:
        raise ValueError("the proxy variable names no host")
    auth = None
    if parts.username is not None:
        from urllib.parse import unquote

        auth = basic_authorization(unquote(parts.username), unquote(parts.password or ""))
    return (parts.hostname, parts.port or 80, auth)


def basic_authorization(username: str, password: str) -> str:
    """An ``Authorization`` (or ``Proxy-Authorization``) value for HTTP Basic."""
    import base64

    return "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode("ascii")


class BodyError(Exception):
    """A response body over its cap (``kind`` "limit") or in an encoding we do not read ("encoding")."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail


def read_capped(response: Response, limit: int) -> bytes:
    """The whole body of ``response``, decoded, at most ``limit`` bytes; BodyError beyond.

    Content-Encoding is undone here, with the output bounded at every step (a few MB of
    gzip must not inflate to gigabytes before anything counts it); the bytes on the wire
    are bounded too. Network errors propagate as the caller's read errors.
    """
    import zlib

    encoding = response.content_encoding
    if encoding == "identity":
        decoder = None
    elif encoding in ("gzip", "x-gzip", "deflate"):
        decoder = zlib.decompressobj(32 + zlib.MAX_WBITS)  # gzip or zlib header, detected
    else:
        raise BodyError("encoding", f"the response has Content-Encoding {encoding[:40]!r}, which imagelint does not read")
    from imagelint import deadline

    # read1: whatever one socket read brings (a body dripped a byte at a time is seen byte by
    # byte, so the deadline is checked between them; read(n) would block until n bytes came).
    parts: list[bytes] = []
    total = wire = 0
    wire_limit = limit + (1 << 20)
    while True:
        deadline.check("reading a response")
        chunk = response.read1(65536)
        if not chunk:
            break
        wire += len(chunk)
        if wire > wire_limit:
            raise BodyError("limit", f"body larger than {limit} bytes")
        while decoder is not None and chunk:
            try:
                out = decoder.decompress(chunk, limit + 1 - total)
            except zlib.error:
                raise BodyError("encoding", f"the body is not valid {encoding}") from None
            total += len(out)
            if total > limit or decoder.unconsumed_tail:
                raise BodyError("limit", f"body larger than {limit} bytes once decoded")
            parts.append(out)
            chunk = b""
            if decoder.eof and decoder.unused_data:  # the next member of a multi-member gzip stream
                chunk = decoder.unused_data
                decoder = zlib.decompressobj(32 + zlib.MAX_WBITS)
        if decoder is None:
            total += len(chunk)
            if total > limit:
                raise BodyError("limit", f"body larger than {limit} bytes")
            parts.append(chunk)
    if decoder is not None and not decoder.eof and total:
        raise BodyError("encoding", f"the body ends inside its {encoding} stream")
    return b"".join(parts)


def _is_tls_error(exc: BaseException) -> bool:
    ssl = sys.modules.get("ssl")  # no TLS error can exist before ssl is imported
    return ssl is not None and isinstance(exc, ssl.SSLError)


def _reason(exc: BaseException) -> str:
    """The innermost useful sentence of an exception chain, on one line."""
    inner: BaseException = exc
    for _ in range(8):
        reason = getattr(inner, "reason", None)
        if isinstance(reason, BaseException):
            inner = reason
        elif inner.args and isinstance(inner.args[0], BaseException):
            inner = inner.args[0]
        else:
            break
    text = str(inner) or type(inner).__name__
    ssl = sys.modules.get("ssl")  # no TLS error can exist before ssl is imported
    if ssl is not None and isinstance(inner, ssl.SSLCertVerificationError) and inner.verify_message:
        text = f"certificate verify failed: {inner.verify_message}"
    text = re.sub(r"<[^>]*object at 0x[0-9a-f]+>:\s*", "", text)
    return " ".join(text.split())[:300]
