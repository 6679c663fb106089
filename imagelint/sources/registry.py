"""Read images straight from a registry over the distribution API (no daemon).

``open_registry(ref, options)`` resolves a name such as ``127.0.0.1:5000/ns/app:1.0``
(``imagelint.reference.parse_registry_name``), fetches the manifest (negotiating
OCI and Docker types), walks an index to the requested platform(s), fetches and
verifies each config, and returns ``Image`` objects whose layers are *lazy*: no
layer byte is requested until ``Layer.open()``, which streams the blob through a
``VerifyingReader`` and resumes with a ``Range`` request if the connection drops.

Every document is digest-verified: manifests fetched by digest, manifests whose
registry sent ``Docker-Content-Digest``, configs, and (at EOF) layers. Failures are
one-line ``RegistryError``/``ImageFormatError`` messages (exit 3) that name the
registry, the repository and the step, with secrets redacted.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from types import MappingProxyType
from typing import BinaryIO
from urllib.parse import urlsplit

from imagelint import deadline
from imagelint.deadline import DeadlineExceeded
from imagelint.deadline import message as deadline_message
from imagelint.digest import VerifyingReader, compute_digest, parse_digest, verify_bytes
from imagelint.errors import (
    ImageFormatError,
    LimitExceededError,
    RegistryError,
    SourceError,
    UsageError,
)
from imagelint.image import INDEX_MEDIA_TYPES, Image, ImageConfig, Layer
from imagelint.reference import ImageReference, RegistryName, parse_registry_name
from imagelint.sources.docker_config import config_key
from imagelint.sources.http import (
    BodyError,
    ConnectionLost,
    HttpTransport,
    RequestRecord,
    Response,
    TlsProbe,
    TransportFailure,
    read_capped,
    same_origin,
)
from imagelint.sources.manifest import (
    ACCEPT_MANIFESTS,
    MAX_DOCUMENT_BYTES,
    MAX_INDEX_DEPTH,
    MAX_INDEX_ENTRIES,
    MAX_INDEX_FETCHES,
    Descriptor,
    Index,
    Manifest,
    check_diff_ids,
    parse_document,
    parse_image_config,
    select_platforms,
)
from imagelint.sources.options import SourceOptions
from imagelint.sources.registry_auth import Authenticator, Redactor, load_credentials
from imagelint.untrusted import loads_json

CHUNK_SIZE = 1024 * 1024  # largest single read from a blob socket
ERROR_BODY_LIMIT = 64 * 1024  # how much of an error response we read to find the registry's error code
MAX_AUTH_ROUNDS = 2
_BODY_READ_ERRORS = (OSError,)  # a socket's errors and the transport's ConnectionLost


def short_digest(digest: str) -> str:
    """``sha256:ab12cd34ef56…``: enough to recognise a blob in a one-line message."""
    algo, _, hexd = digest.partition(":")
    return f"{algo}:{hexd[:12]}…" if len(hexd) > 12 else digest


def open_registry(ref: ImageReference, options: SourceOptions) -> list[Image]:
    """The ``registry:`` source: one Image, or one per platform with ``all_platforms``."""
    name = parse_registry_name(ref.value)
    return read_images(RegistryClient(name, options), options)


def is_loopback(host: str) -> bool:
    """``localhost``, 127.0.0.0/8 or ``::1``: Docker's insecure-by-default registries."""
    import ipaddress

    host = host.strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class FetchedDocument:
    """A manifest or index as the registry sent it, its bytes checked against the digest asked for or sent."""

    data: bytes
    digest: str
    content_type: str | None


class RegistryClient:
    """The distribution API for one registry + repository.

    ``requests_made`` and ``log`` (``RequestRecord``s, query strings dropped)
    count every request, token requests included, so tests can assert what a
    check costs. ``on_request`` is called for each request as it completes.
    """

    def __init__(
        self,
        name: RegistryName,
        options: SourceOptions,
        on_request: Callable[[RequestRecord], None] | None = None,
    ) -> None:
        self.name = name
        self.options = options
        self.host = name.api_host
        self.where = f"registry {name.registry}, repository {name.repository}"
        if options.ca_cert is not None and not os.path.isfile(options.ca_cert):
            raise UsageError(f"CA certificate file {options.ca_cert!r} does not exist")
        self._insecure = {h.strip().lower() for h in options.insecure_registries if h.strip()}
        self.redact = Redactor()
        self.transport = HttpTransport(
            self._verify_for, options.timeout, options.retries, options.backoff, on_request
        )
        credentials = options.registry_credentials.get(name.registry) or load_credentials(
            name.registry, options.docker_config, options.timeout
        )
        self.auth = Authenticator(name.registry, name.repository, credentials, self.transport, self.redact, self.where)
        self._base: str | None = None
        self._https = f"https://{self.host}"
        # Docker's insecure-by-default registries: tried over HTTPS, then plain HTTP (``_bases``).
        self._loopback = is_loopback(urlsplit(self._https).hostname or "")
        # Most loopback registries speak plain HTTP (a CI job's registry service, kind's): their
        # first HTTPS try trusts no CA, so the CA store is read only when one turns out to speak
        # TLS (see ``_once``).
        self._probing_tls = options.ca_cert is None and self._loopback and not self.is_insecure(self._https)

    # --- bookkeeping -------------------------------------------------------------------------

    @property
    def requests_made(self) -> int:
        return self.transport.requests_made

    @property
    def log(self) -> list[RequestRecord]:
        return self.transport.log

    def is_insecure(self, url: str) -> bool:
        parts = urlsplit(url)
        netloc = (parts.netloc.rpartition("@")[2]).lower()
        host = (parts.hostname or "").lower()
        return netloc in self._insecure or (parts.port is None and host in self._insecure)

    def _verify_for(self, url: str) -> bool | str | TlsProbe:
        # An explicit choice for every request: REQUESTS_CA_BUNDLE must not override it.
        if self.is_insecure(url):
            return False
        if self._probing_tls and url.startswith(self._https + "/"):
            return TlsProbe.NO_TRUST
        return self.options.ca_cert or True

    def _bases(self) -> list[str]:
        if self._base:
            return [self._base]
        # Plain HTTP only for registries the user named as insecure, and for loopback ones
        # (localhost, 127.0.0.0/8, ::1), which Docker treats as insecure by default. Unlike
        # Docker, a loopback registry that speaks TLS is still verified (see ``_once``).
        https = self._https
        return [https, f"http://{self.host}"] if self._loopback or self.is_insecure(https) else [https]

    # --- requests ------------------------------------------------------------------------------

    def send(self, method: str, path: str, step: str, headers: Mapping[str, str] | None = None,
             not_found: str | None = None) -> Response:
        """One API request with auth, retries and scheme fallback; not 200/206 → RegistryError.

        ``not_found`` replaces the step in the message of a 404 ("tag '1.0' not found").
        """
        response = self._authorized(method, path, step, dict(headers or {}))
        if response.status_code in (200, 206):
            return response
        raise self._status_error(response, step, not_found)

    def _authorized(self, method: str, path: str, step: str, headers: dict[str, str]) -> Response:
        response = self._once(method, path, step, headers)
        for _ in range(MAX_AUTH_ROUNDS):
            if response.status_code != 401:
                break
            if not same_origin(response.url or "", self._base or ""):
                # A redirect target (blob storage, a CDN) asking for auth: its challenge is not the
                # registry's, and the registry's credentials go to the registry's challenges only.
                break
            try:
                answered = self.auth.answer(response.headers.get("WWW-Authenticate"), step)
            except BaseException:
                response.close()
                raise
            if not answered:
                break  # nothing new to try: the 401 is reported, with the registry's error code
            response.close()
            response = self._once(method, path, step, headers)
        return response

    def _once(self, method: str, path: str, step: str, headers: dict[str, str]) -> Response:
        bases = self._bases()
        for i, base in enumerate(bases):
            try:
                response = self.transport.request(method, base + path, {**headers, **self.auth.headers()})
            except TransportFailure as failure:
                certificate = "certificate" in failure.detail.lower()
                if self._probing_tls and i == 0:
                    self._probing_tls = False
                    if failure.kind == "tls" and certificate:
                        # It speaks TLS (the probe trusted no certificate): again, with the CA store.
                        return self._once(method, path, step, headers)
                # An insecure registry that does not speak TLS: try plain HTTP. A loopback one only
                # when TLS itself failed (a certificate that does not verify is said, not bypassed).
                if i + 1 < len(bases) and failure.kind in ("tls", "connection") and (
                        self.is_insecure(base) or not certificate):
                    continue
                raise self._transport_error(failure, step) from None
            self._base = base
            return response
        raise AssertionError("unreachable")  # pragma: no cover

    # --- errors --------------------------------------------------------------------------------

    def _transport_error(self, failure: TransportFailure, step: str) -> RegistryError | DeadlineExceeded:
        if failure.kind == "tls":
            hint = "; pass --ca-cert with the registry's CA, or --insecure-registry to skip verification"
            detail = f"TLS error: {failure.detail}{hint if 'certificate' in failure.detail.lower() else ''}"
        elif failure.kind == "timeout":
            detail = (f"no answer: {failure.attempts} attempt(s) over {failure.elapsed:.0f} s timed out (each waited "
                      f"{failure.read_timeout:g} s for data; --timeout sets it): {failure.detail}")
        elif failure.kind == "connection":
            detail = f"connection failed after {failure.attempts} attempt(s): {failure.detail}"
        elif failure.kind == "deadline":
            return DeadlineExceeded(self.redact(f"{self.where}: {step}: {deadline_message()}"))
        else:
            detail = failure.detail
        return RegistryError(self.redact(f"{self.where}: {step}: {detail}"))

    def _status_error(self, response: Response, step: str, not_found: str | None = None) -> RegistryError:
        status = response.status_code
        codes, message = _registry_errors(response)
        response.close()
        code_text = f" {','.join(codes)}" if codes else ""
        if status == 404 and not_found:
            text = f"{not_found} (HTTP 404{code_text})"
        elif status == 401 and not same_origin(response.url or "", self._base or ""):
            text = (f"{step}: HTTP 401 from {urlsplit(response.url).netloc}, where the registry redirected "
                    "(the registry's credentials are sent to the registry only)")
        elif status == 401:
            if self.auth.credentials is None:
                why = f"authentication required and the docker config has no credentials for {config_key(self.name.registry)}"
            else:
                why = f"the credentials for {config_key(self.name.registry)} were rejected"
            text = f"{step}: {why} (HTTP 401{code_text})"
        elif status == 403:
            text = f"{step}: access denied (HTTP 403{code_text}{': ' + message if message else ''})"
        elif status == 429 and self.transport.gave_up_waiting is not None:
            text = (f"{step}: HTTP 429{code_text}: rate limited; the registry asks to wait "
                    f"{self.transport.gave_up_waiting:g} s (Retry-After), more than --timeout or the time left (--deadline)")
        else:
            retried = f" after {self.transport.retries + 1} attempts" if status in (429, 500, 502, 503, 504) else ""
            text = f"{step}: HTTP {status}{code_text}{': ' + message if message else ''}{retried}"
        return RegistryError(self.redact(f"{self.where}: {text}"))

    # --- documents -----------------------------------------------------------------------------

    def fetch_manifest(self, reference: str) -> FetchedDocument:
        """GET a manifest or index by tag or digest, verified against what we asked and what was sent."""
        by_digest = ":" in reference
        step = f"fetching manifest {short_digest(reference) if by_digest else reference}"
        path = f"/v2/{self.name.repository}/manifests/{reference}"
        not_found = f"manifest {reference} not found" if by_digest else f"tag {reference!r} not found"
        data, response_headers = self._document(path, step, {"Accept": ACCEPT_MANIFESTS}, not_found)
        what = f"{self.where}: manifest {reference}"
        if by_digest:
            verify_bytes(data, reference, what)
        sent = response_headers.get("Docker-Content-Digest")
        if sent:
            parse_digest(sent)
            verify_bytes(data, sent, what)
        digest = reference if by_digest else (sent or compute_digest(data))
        return FetchedDocument(data, digest, response_headers.get("Content-Type"))

    def fetch_blob_document(self, descriptor: Descriptor, kind: str) -> bytes:
        """A small blob (a config) read whole, bounded and verified."""
        if descriptor.size is not None and descriptor.size > MAX_DOCUMENT_BYTES:
            raise LimitExceededError(
                f"{self.where}: {kind} {short_digest(descriptor.digest)} is {descriptor.size} bytes (limit {MAX_DOCUMENT_BYTES})"
            )
        step = f"fetching {kind} {short_digest(descriptor.digest)}"
        data, _ = self._document(f"/v2/{self.name.repository}/blobs/{descriptor.digest}", step, {})
        return _verified_blob(data, descriptor, f"{self.where}: {kind} {descriptor.digest}")

    def fetch_config(self, descriptor: Descriptor, what: str) -> ImageConfig:
        """An image config: from the cache when it holds these very bytes (checked against the
        digest and size again, as the cache is untrusted), else fetched and verified. A config is
        content-addressed (a tag that moves names another one), so a warm check asks the registry
        only for the manifest. A config that may hold a secret (``redact.may_hold_secrets``: an
        env value, a build argument in its history) is never written to the cache."""
        from imagelint.layers.cache import document_key, open_cache

        store = open_cache(self.options.cache_dir, self.options.no_cache)
        key = document_key("config", descriptor.digest)
        if store is None or key is None:
            return parse_image_config(self.fetch_blob_document(descriptor, "config"), what)
        data = store.get(key)
        if data is not None and len(data) <= MAX_DOCUMENT_BYTES:
            try:
                _verified_blob(data, descriptor, what)
            except ImageFormatError:
                pass  # not the blob the digest names (other bytes, another size): a miss
            else:
                return parse_image_config(data, what)
        data = self.fetch_blob_document(descriptor, "config")
        config = parse_image_config(data, what)
        from imagelint.redact import may_hold_secrets

        if not may_hold_secrets(data.decode("utf-8", "replace"), config.labels):
            store.put(key, data)
        return config

    def _document(
        self, path: str, step: str, headers: dict[str, str], not_found: str | None = None
    ) -> tuple[bytes, Mapping[str, str]]:
        """GET a bounded body; a connection that drops mid-body is retried like any other failure."""
        attempt = 0
        while True:
            response = self.send("GET", path, step, headers, not_found=not_found)
            try:
                with response:
                    data = _read_bounded(response, MAX_DOCUMENT_BYTES, f"{self.where}: {step}")
                    return data, response.headers
            except _BODY_READ_ERRORS as exc:
                if attempt >= self.transport.retries or not self.transport.may_wait(attempt):
                    raise RegistryError(self.redact(
                        f"{self.where}: {step}: connection lost while reading the response after "
                        f"{attempt + 1} attempt(s): {_what_broke(exc)}"
                    )) from None
                self.transport.pause(attempt)
                attempt += 1

    # --- layers ----------------------------------------------------------------------------------

    def open_blob(self, digest: str, size: int | None) -> BinaryIO:
        """Stream a blob, verified at EOF against its digest and declared size."""
        what = f"{self.where}: blob {digest}"
        return VerifyingReader(_BlobStream(self, digest, size), digest, what, size=size)  # type: ignore[return-value]  # read and closed like a BinaryIO; not all of one

    def blob_response(self, digest: str, offset: int) -> Response:
        step = f"fetching blob {short_digest(digest)}"
        # identity: byte offsets for Range must be offsets into the blob itself.
        headers = {"Accept-Encoding": "identity"}
        if offset:
            headers["Range"] = f"bytes={offset}-"
        response = self.send("GET", f"/v2/{self.name.repository}/blobs/{digest}", step, headers)
        encoding = response.content_encoding
        if encoding != "identity":
            # The digest is checked on the bytes received, and resuming needs offsets into the blob
            # itself: an encoded body is refused, not decoded (identity was asked for).
            response.close()
            raise ImageFormatError(self.redact(
                f"{self.where}: {step}: the registry sent the blob with Content-Encoding "
                f"{encoding[:40]!r} though identity was asked for"))
        return response


class _BlobStream(io.RawIOBase):
    """A blob body that survives dropped connections by resuming where it stopped (Range)."""

    def __init__(self, client: RegistryClient, digest: str, size: int | None) -> None:
        super().__init__()
        self._client = client
        self._digest = digest
        self._size = size
        self._pos = 0
        self._resumes = 0
        self._response = client.blob_response(digest, 0)
        self._eof = False

    def readable(self) -> bool:
        return True

    def read(self, n: int | None = -1) -> bytes:
        if n is None or n < 0:
            parts = []
            while chunk := self.read(CHUNK_SIZE):
                parts.append(chunk)
            return b"".join(parts)
        n = min(n, CHUNK_SIZE)
        while n and not self._eof:
            if (left := deadline.remaining()) is not None and left <= 0:
                client = self._client
                raise DeadlineExceeded(client.redact(
                    f"{client.where}: fetching blob {short_digest(self._digest)}: {deadline_message()}"))
            try:
                # One read1: whatever the socket holds, up to n (the decompressor asks for 512 KB),
                # returned at once. Looping to fill n cost more Python per byte than inflating it,
                # and read(n) would lose a partial chunk when the connection drops; this way every
                # byte received counts and a resume asks only for the rest (Range).
                data = self._response.read1(n)
            except _BODY_READ_ERRORS as exc:
                self._resume(_what_broke(exc))
                continue
            if not data:
                if self._size is not None and self._pos < self._size:
                    self._resume("connection closed early")
                    continue
                self._eof = True
                break
            self._pos += len(data)
            return data
        return b""

    def readinto(self, buffer) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def _resume(self, reason: str) -> None:
        client = self._client
        self._resumes += 1
        self._response.close()
        if self._resumes > client.transport.retries or not client.transport.may_wait(self._resumes - 1):
            total = f" of {self._size}" if self._size is not None else ""
            raise RegistryError(client.redact(
                f"{client.where}: fetching blob {short_digest(self._digest)}: connection lost after "
                f"{self._pos}{total} bytes and {client.transport.retries} resumes ({reason})"
            ))
        client.transport.pause(self._resumes - 1)
        response = client.blob_response(self._digest, self._pos)
        if response.status_code == 200 and self._pos:
            _skip(response, self._pos)  # the registry ignored Range: drop what we already have
        self._response = response

    def close(self) -> None:
        if not self.closed:
            self._response.close()
        super().close()


def _skip(response: Response, count: int) -> None:
    left = count
    while left:
        data = response.read1(min(left, CHUNK_SIZE))
        if not data:
            raise ConnectionLost("the body ended before the resume offset")
        left -= len(data)


def _what_broke(exc: OSError) -> str:
    return " ".join(str(exc).split())[:160] or type(exc).__name__


def _read_bounded(response: Response, limit: int, what: str) -> bytes:
    try:
        return read_capped(response, limit)
    except DeadlineExceeded as exc:
        raise DeadlineExceeded(f"{what}: {exc.message}") from None
    except BodyError as exc:
        if exc.kind == "limit":
            raise LimitExceededError(f"{what}: document larger than {limit} bytes") from None
        raise ImageFormatError(f"{what}: {exc.detail}") from None


def _registry_errors(response: Response) -> tuple[list[str], str]:
    """The distribution error codes and first message of an error body, if it has them."""
    try:
        body = read_capped(response, ERROR_BODY_LIMIT)
        doc = loads_json(body or b"{}")
    except (ValueError, UnicodeDecodeError, BodyError, *_BODY_READ_ERRORS):
        return [], ""
    errors = doc.get("errors") if isinstance(doc, dict) else None
    if not isinstance(errors, list):
        return [], ""
    codes = [str(e.get("code"))[:40] for e in errors if isinstance(e, dict) and e.get("code")]
    messages = [str(e.get("message")) for e in errors if isinstance(e, dict) and e.get("message")]
    message = " ".join(messages[0].split())[:160] if messages else ""
    return codes, message


# --- manifests → images ----------------------------------------------------------------------------


def read_images(client: RegistryClient, options: SourceOptions) -> list[Image]:
    """Resolve the client's reference to images: one, or one per platform with ``all_platforms``."""
    name = client.name
    top = client.fetch_manifest(name.reference)
    doc = parse_document(top.data, f"{client.where}: manifest {name.reference}", top.content_type)
    if isinstance(doc, Manifest):
        image = _image(client, doc, top.digest, None, MappingProxyType({}))
        if options.platform_explicit and not options.all_platforms and not options.platform.matches(image.platform):
            raise SourceError(
                f"{client.where}: {name} is a single-platform image for {image.platform}, not {options.platform}"
            )
        return [image]
    candidates = _flatten_index(client, doc, top.digest, depth=1, seen=(top.digest,))
    chosen = select_platforms(
        Index(doc.media_type, tuple(candidates), doc.annotations), options.platform, options.all_platforms, f"{client.where}: {name}"
    )
    images = []
    for descriptor in chosen:
        fetched = client.fetch_manifest(descriptor.digest)
        _check_size(fetched.data, descriptor, client.where)
        child = parse_document(fetched.data, f"{client.where}: manifest {descriptor.digest}", fetched.content_type)
        if not isinstance(child, Manifest):
            raise ImageFormatError(f"{client.where}: index entry {descriptor.digest} is not an image manifest")
        images.append(_image(client, child, descriptor.digest, top.digest, descriptor.annotations))
    return images


def _flatten_index(client: RegistryClient, index: Index, digest: str, depth: int, seen: tuple[str, ...],
                   fetched_indexes: dict[str, list[Descriptor]] | None = None) -> list[Descriptor]:
    """Every image entry of an index, nested indexes expanded (bounded depth, no cycles).

    Each nested index is fetched once however often it is named (an index whose entries all
    name the same child, nested four deep, would otherwise cost entries^4 requests), at most
    ``MAX_INDEX_FETCHES`` of them, and the expansion holds at most ``MAX_INDEX_ENTRIES``.
    """
    memo = {} if fetched_indexes is None else fetched_indexes
    out: list[Descriptor] = []
    for entry in index.manifests:
        if entry.media_type not in INDEX_MEDIA_TYPES:
            out.append(entry)
        elif entry.digest in seen:
            raise ImageFormatError(f"{client.where}: index {digest} refers to itself through {entry.digest}")
        elif depth >= MAX_INDEX_DEPTH:
            raise LimitExceededError(f"{client.where}: indexes nested deeper than {MAX_INDEX_DEPTH} levels")
        elif entry.digest in memo:
            out.extend(memo[entry.digest])
        else:
            if len(memo) >= MAX_INDEX_FETCHES:
                raise LimitExceededError(f"{client.where}: index {digest} names more than {MAX_INDEX_FETCHES} nested indexes")
            fetched = client.fetch_manifest(entry.digest)
            _check_size(fetched.data, entry, client.where)
            nested = parse_document(fetched.data, f"{client.where}: index {entry.digest}", fetched.content_type)
            if isinstance(nested, Manifest):
                found = [Descriptor(nested.media_type, entry.digest, entry.size, entry.platform, entry.annotations)]
            else:
                found = _flatten_index(client, nested, entry.digest, depth + 1, seen + (entry.digest,), memo)
            memo[entry.digest] = found
            out.extend(found)
        if len(out) > MAX_INDEX_ENTRIES:
            raise LimitExceededError(f"{client.where}: index {digest} expands to more than {MAX_INDEX_ENTRIES} entries")
    return out


def _verified_blob(data: bytes, descriptor: Descriptor, what: str) -> bytes:
    """``data`` when it is the blob ``descriptor`` names (its digest, and its size when declared),
    else ``ImageFormatError``: a registry's answer and a cache entry are held to the same test."""
    verify_bytes(data, descriptor.digest, what)
    if descriptor.size is not None and len(data) != descriptor.size:
        raise ImageFormatError(f"{what}: {len(data)} bytes, the manifest declares {descriptor.size}")
    return data


def _check_size(data: bytes, descriptor: Descriptor, where: str) -> None:
    if descriptor.size is not None and len(data) != descriptor.size:
        raise ImageFormatError(f"{where}: manifest {descriptor.digest} is {len(data)} bytes, the index declares {descriptor.size}")


def _image(
    client: RegistryClient, manifest: Manifest, digest: str, index_digest: str | None, entry_annotations: Mapping[str, str]
) -> Image:
    what = f"{client.where}: config {manifest.config.digest}"
    config = client.fetch_config(manifest.config, what)
    check_diff_ids(config, len(manifest.layers), what)
    layers = tuple(
        Layer(
            index=i,
            digest=d.digest,
            size=d.size,
            media_type=d.media_type,
            diff_id=config.diff_ids[i] if i < len(config.diff_ids) else None,
            opener=partial(client.open_blob, d.digest, d.size),
        )
        for i, d in enumerate(manifest.layers)
    )
    return Image(
        ref=str(client.name),
        source="registry",
        platform=config.platform,
        config=config,
        layers=layers,
        digest=digest,
        config_digest=manifest.config.digest,
        index_digest=index_digest,
        manifest_media_type=manifest.media_type,
        annotations=MappingProxyType({**entry_annotations, **manifest.annotations}),
    )


__all__ = ["RegistryClient", "open_registry", "read_images", "short_digest", "FetchedDocument"]
