"""The retrying HTTP layer under the registry source: imagelint's policy on urllib3's transport.

urllib3 does HTTP/1.1 (framing, keep-alive pools per origin, TLS, proxies and their
``CONNECT`` tunnels); ``HttpTransport`` decides everything a registry client must decide
itself, so each urllib3 call is made with ``retries=False``, ``redirect=False``,
``preload_content=False`` and ``decode_content=False``:

- retries: 429 with ``Retry-After``, 500/502/503/504, connection errors, resets and read
  timeouts, exponential backoff with jitter, no wait past ``--timeout`` or the run's deadline;
- TLS per request: verified against the default CA bundle, against ``--ca-cert`` only, or not
  at all for an ``--insecure-registry`` (an ``ssl.SSLContext`` of ours for each choice, so
  ``REQUESTS_CA_BUNDLE`` and ``SSL_CERT_FILE`` never decide behind the user's back);
- ``(connect, read)`` timeouts cut to what is left of the run (``imagelint.deadline``);
- redirects followed here, so that ``Authorization`` never leaves the origin it was meant for;
- proxies from the environment (``imagelint.sources.proxy``), their credentials sent as
  ``Proxy-Authorization`` and never printed;
- bodies streamed and bounded by the caller (``read_capped`` undoes ``Content-Encoding`` within
  its cap; a blob must come as sent, its digest is checked on the bytes received);
- no ``~/.netrc`` and no cookies (RFC 6265 cookies ignore the port, so a registry's cookie would
  reach any other service on its host; no registry protocol needs one), which urllib3 never reads.

It also counts and logs requests, so tests can assert how many a check cost. Nothing here
knows about registries: callers turn a final bad status or a ``TransportFailure`` into their
own one-line error.
"""

from __future__ import annotations

import enum
import http.client
import re
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import cast
from urllib.parse import urlencode, urljoin, urlsplit

import urllib3
from urllib3 import exceptions as u3

import imagelint
from imagelint.lazyre import lazy_pattern
from imagelint.sources.proxy import Proxy, proxy_for

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
MAX_REDIRECTS = 5
RETRY_AFTER_CAP = 30.0  # seconds; a registry asking for longer is treated as this
BACKOFF_CAP = 30.0
SENSITIVE_HEADERS = ("authorization", "cookie", "proxy-authorization")
# Retrying cannot change the outcome. ``resolve``: the resolver said the name does not exist
# (EAI_NONAME, EAI_NODATA, EAI_FAIL); a temporary failure (EAI_AGAIN) is a ``connection`` one.
NOT_RETRYABLE = frozenset({"tls", "redirect", "invalid", "deadline", "proxy", "resolve"})
USER_AGENT = f"imagelint/{imagelint.__version__}"
# Only the encodings read_capped decodes itself, within its bound (not brotli or zstd).
DEFAULT_HEADERS = {"User-Agent": USER_AGENT, "Accept": "*/*", "Accept-Encoding": "gzip, deflate"}
POOL_SIZE = 8  # kept-alive connections per origin: the layer workers share them
DRAIN_LIMIT = 64 * 1024  # an unread body up to this is read at close, to keep the connection
DRAIN_TIMEOUT = 0.05  # seconds: how long closing waits for such a body's bytes
_TUNNEL_STATUS = lazy_pattern(r"Tunnel connection failed: (\d{3})")


@dataclass(frozen=True)
class RequestRecord:
    """One request as sent (query string dropped: presigned URLs carry secrets there)."""

    method: str
    url: str
    status: int | None  # None when no response came back
    authorized: bool


class TransportFailure(Exception):
    """No usable response: connection refused/reset, timeout, TLS failure, too many redirects.

    ``kind`` is ``tls``, ``timeout``, ``connection``, ``redirect``, ``invalid``, ``proxy`` (the
    proxy refused us: authentication or its TLS) or ``deadline`` (the run's ``--deadline``,
    ``imagelint.deadline``); ``detail`` is the underlying reason (not yet redacted: callers redact).
    """

    def __init__(self, kind: str, detail: str, attempts: int) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail
        self.attempts = attempts
        self.elapsed = 0.0  # seconds from the first attempt to giving up, waits included
        self.read_timeout = 0.0  # the read timeout each attempt had (seconds between bytes)


class ConnectionLost(OSError):
    """The body could not be read to its end: the connection broke, timed out, or the peer
    broke the protocol (a body shorter than its ``Content-Length``, a bad chunk)."""


class TlsProbe(enum.Enum):
    """A TLS choice for a server that may not speak TLS at all (a loopback registry, tried over
    HTTPS first): certificates are required and none is trusted, so no CA store is read (the costly
    part of a TLS context). A server that speaks TLS fails the handshake on its certificate, before
    a byte of the request is sent; one that does not, fails it on the protocol."""

    NO_TRUST = "no-trust"


# How a request to a URL is verified: True (the default CA store), a CA file, False (not at all), or
# the probe that trusts nothing.
VerifyChooser = Callable[[str], "bool | str | TlsProbe"]


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
    try:
        return urllib3.Retry(retry_after_max=float("inf")).parse_retry_after(value)  # type: ignore[arg-type]  # typed int; inf: no cap
    except (u3.InvalidHeader, OverflowError, ValueError):
        return None


class Response:
    """One HTTP response: ``status_code``, ``headers`` (case-insensitive; repeated fields joined
    with ", "), ``url`` (the URL this response answers) and the body as a stream, read with
    ``read1`` (what one socket read brings, at most n). ``close()`` hands a kept-alive
    connection back to its pool once the body is read, and closes any other."""

    def __init__(self, url: str, raw: urllib3.BaseHTTPResponse) -> None:
        self.url = url
        self.status_code = raw.status
        self.headers = raw.headers
        self._raw = cast(urllib3.HTTPResponse, raw)  # what urlopen() returns, typed as its base class

    @property
    def content_encoding(self) -> str:
        """The body's ``Content-Encoding``, lower-case; ``identity`` when none is named."""
        return (self.headers.get("Content-Encoding") or "").strip().lower() or "identity"

    def read1(self, n: int) -> bytes:
        try:
            return self._raw.read1(n)
        except (u3.HTTPError, http.client.HTTPException) as exc:
            raise ConnectionLost(_reason(exc)) from None

    def close(self) -> None:
        raw = self._raw
        remaining = getattr(raw, "length_remaining", None)
        if not raw.isclosed() and remaining is not None and remaining <= DRAIN_LIMIT:
            # A short unread body (a 401, a redirect): read it if it is already there, so the
            # connection stays usable; a body still dripping in is not waited for.
            sock = getattr(raw.connection, "sock", None)
            if sock is not None:
                sock.settimeout(DRAIN_TIMEOUT)
            raw.drain_conn()
        if not raw.isclosed():
            raw.close()  # the rest of the body is not read: the connection cannot carry another request
        raw.release_conn()

    def __enter__(self) -> Response:
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
        self._managers: dict[tuple, urllib3.PoolManager] = {}
        self._contexts: dict[bool | str | TlsProbe, ssl.SSLContext] = {}
        self._lock = threading.Lock()

    @property
    def requests_made(self) -> int:
        return len(self.log)

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Exponential backoff with full jitter; a server's Retry-After wins, capped."""
        if retry_after is not None:
            return min(retry_after, RETRY_AFTER_CAP)
        import random

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
        started = time.monotonic()
        from imagelint import progress

        try:
            while True:
                # The CLI's progress line says what a silent read waits for (a registry that never answers).
                progress.waiting(f"{urlsplit(url).netloc.rpartition('@')[2]}, attempt {attempt + 1} of {self.retries + 1}")
                try:
                    response = self._follow_redirects(method, url, dict(headers or {}), data)
                except TransportFailure as failure:
                    if failure.kind in NOT_RETRYABLE or attempt >= self.retries or not self.may_wait(attempt):
                        failure.attempts = attempt + 1
                        # What the message says is what happened: the time spent and each attempt's bound.
                        failure.elapsed, failure.read_timeout = time.monotonic() - started, self.timeout[1]
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
        finally:
            progress.waiting(None)

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
        body = urlencode(data).encode() if data is not None else None
        given = {name.lower() for name in headers}
        request_headers = {k: v for k, v in DEFAULT_HEADERS.items() if k.lower() not in given}
        request_headers.update(headers)
        if body is not None:
            request_headers["Content-Type"] = "application/x-www-form-urlencoded"
        proxy: Proxy | None = None
        try:
            _check_request(url, request_headers)
            parts = urlsplit(url)
            scheme = parts.scheme.lower()
            proxy = proxy_for(scheme, parts.hostname or "", parts.port or (443 if scheme == "https" else 80))
            manager = self._manager(self._verify_for(url) if scheme == "https" else None, proxy)
            raw = manager.urlopen(
                method, url, body=body, headers=request_headers, redirect=False, retries=False,
                preload_content=False, decode_content=False,
                timeout=urllib3.Timeout(connect=connect_timeout, read=read_timeout),
            )
        except (ValueError, u3.LocationValueError) as exc:  # a proxy variable's ProxyConfigError included
            self._record(method, url, None, authorized)
            raise TransportFailure("invalid", _reason(exc), 1) from None
        except (u3.HTTPError, OSError, http.client.HTTPException) as exc:
            self._record(method, url, None, authorized)
            raise _failure(exc, proxy, urlsplit(url).hostname) from None
        self._record(method, url, raw.status, authorized)
        if raw.status == 407 and proxy is not None and scheme == "http":
            Response(url, raw).close()
            raise TransportFailure("proxy", _proxy_refusal(proxy, 407, "Proxy Authentication Required"), 1)
        return Response(url, raw)

    def _manager(self, verify: bool | str | TlsProbe | None, proxy: Proxy | None) -> urllib3.PoolManager:
        """The pool for one TLS choice and proxy; ``verify`` None: plain http only, so no TLS
        context is made (creating one reads the whole CA store)."""
        key = (verify, proxy)
        with self._lock:
            manager = self._managers.get(key)
            if manager is None:
                context = self._context(verify) if verify is not None else None
                if proxy is None:
                    manager = urllib3.PoolManager(maxsize=POOL_SIZE, ssl_context=context)
                else:
                    # An https:// proxy is the environment's, and so is its trust: the system store.
                    auth = {} if proxy.username is None else {"Proxy-Authorization": basic_authorization(proxy.username, proxy.password or "")}
                    manager = urllib3.ProxyManager(proxy.url, proxy_headers=auth,
                                                   proxy_ssl_context=(ssl.create_default_context()
                                                                      if proxy.url.lower().startswith("https:") else None),
                                                   maxsize=POOL_SIZE, ssl_context=context)
                self._managers[key] = manager
            return manager

    def _context(self, verify: bool | str | TlsProbe) -> ssl.SSLContext:
        """One context per TLS choice (the lock is held). ``True``: the CA bundle requests uses
        (certifi's, when installed) or else the system store; a path: that CA file only
        (``--ca-cert``); ``False``: no verification, and no CA store read at all; ``TlsProbe``:
        verification against no CA at all (every certificate fails it)."""
        context = self._contexts.get(verify)
        if context is None:
            if verify is TlsProbe.NO_TRUST:
                context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # CERT_REQUIRED and check_hostname, no CA
            elif verify is False:
                context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
                context.check_hostname = False
                context.verify_mode = ssl.CERT_NONE  # urllib3's warning about it is the program's to silence (cli.entry)
            else:
                context = ssl.create_default_context(cafile=_default_ca_bundle() if verify is True else str(verify))
            self._contexts[verify] = context
        return context

    def _record(self, method: str, url: str, status: int | None, authorized: bool) -> None:
        record = RequestRecord(method, strip_query(url), status, authorized)
        self.log.append(record)
        if self._on_request:
            self._on_request(record)


def _check_request(url: str, headers: Mapping[str, str]) -> None:
    """Refuse what would not be one well-formed request, without echoing a header's value
    (it may be a credential)."""
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) URL with a host: {strip_query(url)[:200]!r}")
    if not url.isascii() or any(c <= " " or c == "\x7f" for c in url):
        raise ValueError(f"invalid characters in URL {strip_query(url)[:200]!r}")
    for name, value in headers.items():
        if any(c in value for c in "\r\n\x00"):
            raise ValueError(f"the value of header {name[:40]!r} holds a line break or NUL")


def basic_authorization(username: str, password: str) -> str:
    """An ``Authorization`` (or ``Proxy-Authorization``) value for HTTP Basic."""
    import base64

    return "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode("ascii")


def _default_ca_bundle() -> str | None:
    try:
        import certifi
    except ImportError:  # the system store, then
        return None
    return certifi.where()


def _proxy_refusal(proxy: Proxy, status: int, reason: str) -> str:
    # Some proxies (tinyproxy) answer wrong credentials with 401 rather than 407.
    if status not in (401, 407):
        return f"the proxy {proxy.name} answered HTTP {status} {reason}"
    why = "rejected the credentials in the proxy URL" if proxy.username is not None else "requires credentials (none in the proxy URL)"
    return f"the proxy {proxy.name} {why} (HTTP {status} {reason})"


def _unresolved(exc: BaseException) -> socket.gaierror | None:
    """The name-resolution failure in an exception chain, if there is one."""
    inner: BaseException | None = exc
    for _ in range(8):
        if inner is None:
            return None
        if isinstance(inner, socket.gaierror):
            return inner
        inner = next((a for a in (getattr(inner, "reason", None), getattr(inner, "original_error", None),
                                  inner.__cause__, inner.__context__, *inner.args) if isinstance(a, BaseException)), None)
    return None


_PERMANENT_EAI = frozenset(getattr(socket, name) for name in ("EAI_NONAME", "EAI_NODATA", "EAI_FAIL") if hasattr(socket, name))


def _failure(exc: BaseException, proxy: Proxy | None, host: str | None = None) -> TransportFailure:
    from imagelint import deadline

    unresolved = _unresolved(exc)
    if unresolved is not None:
        name = proxy.name if proxy is not None else (host or "the host")
        why = unresolved.strerror or str(unresolved)
        kind = "resolve" if unresolved.errno in _PERMANENT_EAI else "connection"
        return TransportFailure(kind, f"cannot resolve {name} ({why}): offline, no DNS, or a misspelt name?", 1)
    detail = _reason(exc)
    if proxy is not None and proxy.password and len(proxy.password) >= 3:
        detail = detail.replace(proxy.password, "***")
    if isinstance(exc, u3.ProxyError) and proxy is not None:
        tunnel = _TUNNEL_STATUS.search(detail)
        if tunnel:  # the proxy refused the CONNECT: its verdict on our credentials does not change
            status = int(tunnel.group(1))
            return TransportFailure("proxy" if status in (401, 407) else "connection",
                                    _proxy_refusal(proxy, status, detail[tunnel.end():].strip()), 1)
        if isinstance(exc.original_error, (ssl.SSLError, u3.SSLError)):
            return TransportFailure("proxy", f"TLS to the proxy {proxy.name}: {detail}", 1)
        return TransportFailure("connection", f"the proxy {proxy.name}: {detail}", 1)
    if isinstance(exc, (u3.SSLError, ssl.SSLError)):  # certificate checks included
        return TransportFailure("tls", detail, 1)
    if isinstance(exc, (u3.TimeoutError, TimeoutError)) and not isinstance(exc, u3.NewConnectionError):
        left = deadline.remaining()
        if left is not None and left <= 0.05:
            return TransportFailure("deadline", "the run reached its deadline (--deadline)", 1)
        return TransportFailure("timeout", detail or "timed out", 1)
    return TransportFailure("connection", detail, 1)


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


def _reason(exc: BaseException) -> str:
    """The innermost useful sentence of an exception chain, on one line."""
    inner: BaseException = exc
    for _ in range(8):
        nested = next((a for a in (getattr(inner, "reason", None), getattr(inner, "original_error", None), *inner.args)
                       if isinstance(a, BaseException)), None)
        if nested is None and isinstance(inner, u3.NewConnectionError) and inner.__cause__ is not None:
            nested = inner.__cause__
        if nested is None:
            break
        inner = nested
    text = str(inner) or type(inner).__name__
    if isinstance(inner, ssl.SSLCertVerificationError) and inner.verify_message:
        text = f"certificate verify failed: {inner.verify_message}"
    text = re.sub(r"<[^>]*object at 0x[0-9a-f]+>:\s*|\w+Connection\(host=[^)]*\):\s*", "", text)
    return " ".join(text.split())[:300]
