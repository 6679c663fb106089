"""The retrying HTTP layer under the registry source.

One ``HttpTransport`` per registry client. It owns the retry policy (429 with
``Retry-After``, 500/502/503/504, connection errors, resets and read timeouts,
exponential backoff with jitter), the per-request TLS choice (``verify=`` is
passed on every request because ``REQUESTS_CA_BUNDLE`` would otherwise override
a session's setting), bounded ``(connect, read)`` timeouts, and redirects, which
it follows itself so that an ``Authorization`` header never leaves the host it
was meant for. It also counts and logs requests, so tests can assert how many a
check cost.

Credentials come from the docker config only: the session never reads ``~/.netrc``
(``trust_env`` is off; the proxy variables ``HTTPS_PROXY``/``NO_PROXY`` are still
honoured, per request) and keeps no cookies (RFC 6265 cookies ignore the port, so a
registry's cookie would reach any other service on its host; no registry protocol
needs one).

Nothing here knows about registries: callers turn a final bad status or a
``TransportFailure`` into their own one-line error.
"""

from __future__ import annotations

import email.utils
import random
import re
import ssl
import time
import warnings
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping
from urllib.parse import urljoin, urlsplit

import requests
from requests.adapters import HTTPAdapter
import urllib3.exceptions

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
MAX_REDIRECTS = 5
RETRY_AFTER_CAP = 30.0  # seconds; a registry asking for longer is treated as this
BACKOFF_CAP = 30.0
SENSITIVE_HEADERS = ("authorization", "cookie", "proxy-authorization")
NOT_RETRYABLE = frozenset({"tls", "redirect", "invalid", "deadline"})  # retrying cannot change the outcome


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
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


class HttpTransport:
    """Requests with retries, explicit TLS, manual redirects and a request log."""

    def __init__(
        self,
        verify_for: VerifyChooser,
        timeout: float,
        retries: int,
        backoff: float,
        session: requests.Session | None = None,
        on_request: Callable[[RequestRecord], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._verify_for = verify_for
        # Connect fails fast; the read timeout is the gap allowed between bytes, not the whole body.
        self.timeout = (min(timeout, 10.0), timeout)
        self.retries = max(0, retries)
        self.backoff = max(0.0, backoff)
        self.session = session or private_session()
        self.log: list[RequestRecord] = []
        self.gave_up_waiting: float | None = None  # the last Retry-After not waited for
        self._on_request = on_request
        self._sleep = sleep

    @property
    def requests_made(self) -> int:
        return len(self.log)

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Exponential backoff with full jitter; a server's Retry-After wins, capped."""
        if retry_after is not None:
            return min(retry_after, RETRY_AFTER_CAP)
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
        stream: bool = False,
        data: Mapping[str, str] | None = None,
        retry_statuses: Iterable[int] = RETRY_STATUSES,
    ) -> requests.Response:
        """Send with retries; return the final response (maybe an error status).

        Raises TransportFailure when no response could be had within the bound.
        The caller owns (and must close) the returned response.
        """
        retry_on = frozenset(retry_statuses)
        attempt = 0
        while True:
            try:
                response = self._follow_redirects(method, url, dict(headers or {}), stream, data)
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

    def _follow_redirects(
        self, method: str, url: str, headers: dict[str, str], stream: bool, data: Mapping[str, str] | None
    ) -> requests.Response:
        origin = url
        for _ in range(MAX_REDIRECTS + 1):
            response = self._send_once(method, url, headers, stream, data)
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

    def _send_once(
        self, method: str, url: str, headers: dict[str, str], stream: bool, data: Mapping[str, str] | None
    ) -> requests.Response:
        from imagelint import deadline

        authorized = any(k.lower() == "authorization" for k in headers)
        left = deadline.remaining()
        if left is not None and left <= 0:
            raise TransportFailure("deadline", "the run reached its deadline (--deadline)", 1)
        timeout = self.timeout if left is None else (min(self.timeout[0], left), min(self.timeout[1], left))
        verify = self._verify_for(url)
        if verify is False:
            self._skip_ca_store(url)
        try:
            with warnings.catch_warnings():
                if verify is False:
                    # The user named this registry insecure; urllib3's per-request warning adds nothing.
                    warnings.simplefilter("ignore", urllib3.exceptions.InsecureRequestWarning)
                response = self.session.request(
                    method,
                    url,
                    headers=headers,
                    data=data,
                    stream=stream,
                    timeout=timeout,
                    verify=verify,
                    allow_redirects=False,
                    proxies=_env_proxies(url) if not self.session.trust_env else None,
                )
        except requests.exceptions.SSLError as exc:
            self._record(method, url, None, authorized)
            raise TransportFailure("tls", _reason(exc), 1) from None
        except requests.exceptions.Timeout as exc:
            self._record(method, url, None, authorized)
            left = deadline.remaining()
            if left is not None and left <= 0.05:
                raise TransportFailure("deadline", "the run reached its deadline (--deadline)", 1) from None
            raise TransportFailure("timeout", _reason(exc), 1) from None
        except (requests.exceptions.ConnectionError, requests.exceptions.ChunkedEncodingError) as exc:
            self._record(method, url, None, authorized)
            raise TransportFailure("connection", _reason(exc), 1) from None
        except requests.exceptions.RequestException as exc:  # invalid URL and friends: not retryable
            self._record(method, url, None, authorized)
            raise TransportFailure("invalid", _reason(exc), 1) from None
        self._record(method, url, response.status_code, authorized)
        return response

    def _skip_ca_store(self, url: str) -> None:
        """Mount the unverified-TLS adapter for this origin (once)."""
        parts = urlsplit(url)
        if parts.scheme != "https":
            return
        prefix = f"https://{parts.netloc}/"
        if not isinstance(self.session.adapters.get(prefix), UnverifiedTLSAdapter):
            self.session.mount(prefix, UnverifiedTLSAdapter())

    def _record(self, method: str, url: str, status: int | None, authorized: bool) -> None:
        record = RequestRecord(method, strip_query(url), status, authorized)
        self.log.append(record)
        if self._on_request:
            self._on_request(record)


def private_session() -> requests.Session:
    """A session that sends only what imagelint puts in a request: no netrc, no cookies."""
    import http.cookiejar

    session = requests.Session()
    session.trust_env = False  # no ~/.netrc, no REQUESTS_CA_BUNDLE; proxies are added per request
    session.cookies.set_policy(http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))  # accept none
    # Only the encodings read_capped decodes itself, within its bound (not brotli or zstd).
    session.headers["Accept-Encoding"] = "gzip, deflate"
    return session


class BodyError(Exception):
    """A response body over its cap (``kind`` "limit") or in an encoding we do not read ("encoding")."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail


def read_capped(response: requests.Response, limit: int) -> bytes:
    """The whole body of ``response``, decoded, at most ``limit`` bytes; BodyError beyond.

    Content-Encoding is undone here, with the output bounded at every step (a few MB of
    gzip must not inflate to gigabytes before anything counts it); the bytes on the wire
    are bounded too. Network errors propagate as the caller's read errors.
    """
    import zlib

    encoding = (response.headers.get("Content-Encoding") or "identity").strip().lower()
    if encoding in ("identity", ""):
        decoder = None
    elif encoding in ("gzip", "x-gzip", "deflate"):
        decoder = zlib.decompressobj(32 + zlib.MAX_WBITS)  # gzip or zlib header, detected
    else:
        raise BodyError("encoding", f"the response has Content-Encoding {encoding[:40]!r}, which imagelint does not read")
    from imagelint import deadline

    raw = response.raw
    if raw is None:
        return b""
    # read1: whatever one socket read brings (a body dripped a byte at a time is seen byte by
    # byte, so the deadline is checked between them; read(n) would block until n bytes came).
    read = raw.read1 if hasattr(raw, "read1") else raw.read
    parts: list[bytes] = []
    total = wire = 0
    wire_limit = limit + (1 << 20)
    while True:
        deadline.check("reading a response")
        chunk = read(65536, decode_content=False)
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


def _env_proxies(url: str) -> dict[str, str]:
    # The proxy variables (and NO_PROXY) as requests would read them with trust_env on, netrc aside.
    return requests.utils.get_environ_proxies(url)


class UnverifiedTLSAdapter(HTTPAdapter):
    """TLS without certificate checks, for a registry the user named insecure.

    urllib3 loads the system CA store into every context it builds (~50 ms here),
    even when nothing will be verified; a context of our own that never verifies
    skips that. Only ever mounted for an origin whose requests go out with
    ``verify=False`` anyway.
    """

    def init_poolmanager(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        kwargs["ssl_context"] = context
        super().init_poolmanager(*args, **kwargs)


def _reason(exc: BaseException) -> str:
    """The innermost useful sentence of a requests/urllib3 exception chain, on one line."""
    inner: BaseException = exc
    for _ in range(8):
        reason = getattr(inner, "reason", None)
        if isinstance(reason, BaseException):
            inner = reason
        elif inner.args and isinstance(inner.args[0], BaseException):
            inner = inner.args[0]
        else:
            break
    text = re.sub(r"<[^>]*object at 0x[0-9a-f]+>:\s*", "", str(inner) or type(inner).__name__)
    return " ".join(text.split())[:300]
