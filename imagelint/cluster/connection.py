"""One read-only connection to a Kubernetes API server, and the one place its failures are named.

``connect(context, kubeconfig)`` loads the kubeconfig (:mod:`imagelint.cluster.kubeconfig`)
and returns a :class:`Connection`; use it as a context manager so the client's pool is
closed. Every request:

* has a (connect, read) timeout (``DEFAULT_TIMEOUT``) and no retries, so a dead or stalled
  API server costs one timeout, not four;
* returns the parsed JSON body (``_preload_content=False``: no model classes are built);
* fails as one ``ClusterError`` line, ``cluster https://HOST:PORT: STEP: REASON`` (401, 403,
  TLS, refused, timeouts...), with every credential of the kubeconfig scrubbed from it;
* when ``optional=True``, turns 403 Forbidden / 404 Not Found into "not checked" instead:
  ``list_objects`` and ``get_object`` return a result whose ``refused`` is the status, and
  the reader decides what to say (a warning on the Target, a "not checked" line...).

Lists follow ``continue`` tokens, ``LIST_PAGE_SIZE`` items a page, at most
``MAX_LIST_PAGES`` pages (a server that never stops paging is an error, not a hang), and no
answer is read past ``MAX_RESPONSE_BYTES``. Every request's timeouts are cut to what is
left of the run's ``--deadline`` (checked between reads of an answer too); the read
timeout is ``--timeout`` when the CLI gives one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from imagelint.cluster.kubeconfig import load_client_configuration
from imagelint.cluster.resources import Resource
from imagelint.errors import ClusterError, UsageError
from imagelint.untrusted import loads_json

# (connect, read) seconds for every API call: a dead or stalled API server must
# fail the run quickly, not hang CI.
DEFAULT_TIMEOUT: tuple[float, float] = (5.0, 20.0)
LIST_PAGE_SIZE = 500
MAX_LIST_PAGES = 200  # 100,000 objects of one kind: far beyond any cluster imagelint reads
# One answer's body: a page of 500 GPU nodes with all their labels is a few MB. Bigger is read no
# further (untrusted input; memory stays bounded). Callers may pass a smaller max_bytes (pods/log).
MAX_RESPONSE_BYTES = 64 * 2**20
# A log is asked for as a bounded tail, and read no further than this whatever the server sends:
# what was read is diagnosed ("truncated"), the rest dropped with the connection.
MAX_LOG_BYTES = 64 * 1024
_STATUS_TEXT = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 500: "Internal Server Error", 503: "Service Unavailable"}
# Statuses an optional read degrades to "not checked" on: no permission, or the API is not served here.
NOT_CHECKED_STATUSES = (403, 404)


class Refused(Exception):
    """An optional request was refused (403) or its API does not exist here (404); for a read
    whose every failure is an answer (``pods/log``: ``refusable=ANY_STATUS``), any HTTP status.
    ``message`` is the server's own words (its Status ``message``), cleaned and bounded."""

    def __init__(self, status: int, message: str = "") -> None:
        super().__init__(status)
        self.status = status
        self.message = message


ANY_STATUS: tuple[int, ...] = tuple(range(400, 600))  # ``refusable=ANY_STATUS``: every HTTP error status
# ``refused`` of a dump that does not hold the kind (or the log), :mod:`imagelint.cluster.source`:
# not an HTTP status, so no reader mistakes it for 403 (RBAC) or 404 (not served).
NOT_IN_DUMP = -1

def status_text(status: int) -> str:
    """``403`` → ``403 Forbidden``; a dump's ``NOT_IN_DUMP`` → ``not in the dump``."""
    if status == NOT_IN_DUMP:
        return "not in the dump"
    return f"{status} {_STATUS_TEXT.get(status, '')}".strip()


@dataclass(frozen=True)
class Listing:
    """The objects of one list call. ``refused`` (403/404) means an optional list was not checked."""

    items: tuple[Mapping[str, Any], ...] = ()
    refused: int | None = None

    @property
    def checked(self) -> bool:
        return self.refused is None


@dataclass(frozen=True)
class Fetched:
    """One object, or ``refused`` (403/404) when an optional read was not checked."""

    object: Mapping[str, Any] | None = None
    refused: int | None = None

    @property
    def checked(self) -> bool:
        return self.refused is None


@dataclass(frozen=True)
class Connection:
    """A connected client. Readers use ``list_objects`` / ``get_object`` (generic over
    :class:`~imagelint.cluster.resources.Resource`), or ``request`` for a call of the
    typed client they need (``pods/log``...)."""

    api_client: Any  # kubernetes.client.ApiClient
    server: str  # API server URL without any userinfo, for messages
    context: str  # context name, or "in-cluster"
    namespace: str  # the context's namespace (or the pod's)
    secrets: tuple[str, ...]  # never printed: scrubbed from messages as a last guard
    timeout: tuple[float, float]

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        self.api_client.close()

    # --- the generic readers ------------------------------------------------------------

    def list_objects(
        self,
        resource: Resource,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        optional: bool = False,
        step: str | None = None,
    ) -> Listing:
        """Every object of ``resource`` (in ``namespace``, or cluster-wide / all namespaces
        when None), following ``continue`` tokens. ``optional``: 403/404 → ``Listing(refused=...)``."""
        step = step or f"listing {resource.kinds}" + (f" in {namespace}" if namespace else "")
        call = resource.list_call(self.api_client, namespace)
        query: dict[str, Any] = {}
        if label_selector:
            query["label_selector"] = label_selector
        if field_selector:
            query["field_selector"] = field_selector
        items: list[Mapping[str, Any]] = []
        token: str | None = None
        seen: set[str] = set()
        try:
            for _ in range(MAX_LIST_PAGES):
                kwargs: dict[str, Any] = {"limit": LIST_PAGE_SIZE, **query}
                if token:
                    kwargs["_continue"] = token
                body = self.request(step, call, optional=optional, **kwargs)
                if not isinstance(body, Mapping) or not isinstance(body.get("items") or [], list):
                    raise self.error(step, "the answer is not a list of objects")
                items.extend(i for i in body.get("items") or () if isinstance(i, Mapping))
                metadata = body.get("metadata")
                token = metadata.get("continue") if isinstance(metadata, Mapping) else None
                if not token:
                    return Listing(items=tuple(items))
                if not isinstance(token, str) or token in seen:
                    raise self.error(step, "the server repeats its continue token")
                seen.add(token)
        except Refused as refused:
            return Listing(refused=refused.status)
        raise self.error(step, f"more than {MAX_LIST_PAGES * LIST_PAGE_SIZE} {resource.kinds}; stopped reading")

    def get_object(
        self,
        resource: Resource,
        name: str,
        namespace: str | None = None,
        *,
        optional: bool = False,
        step: str | None = None,
    ) -> Fetched:
        """One object by name. ``optional``: 403/404 → ``Fetched(refused=...)``."""
        if resource.namespaced and namespace is None:
            namespace = self.namespace
        where = f"{namespace}/{name}" if resource.namespaced else name
        step = step or f"reading {resource.kind} {where}"
        try:
            body = self.request(step, resource.get_call(self.api_client, name, namespace), optional=optional)
        except Refused as refused:
            return Fetched(refused=refused.status)
        if not isinstance(body, Mapping):
            raise self.error(step, "the answer is not an object")
        return Fetched(object=body)

    # --- one request -------------------------------------------------------------------

    def request(
        self, step: str, call: Callable[..., Any], *args: Any, optional: bool = False, max_bytes: int | None = None,
        refusable: tuple[int, ...] = NOT_CHECKED_STATUSES, **kwargs: Any
    ) -> Any:
        """Run one API request of the typed client and return its JSON body. Any failure
        becomes a one-line ClusterError naming the server and the step; ``optional``
        ``refusable`` statuses (403/404 by default; a writer passes 409) → ``Refused``; a body
        over ``max_bytes`` (default ``MAX_RESPONSE_BYTES``) is an error."""
        body = self._send(step, call, args, kwargs, optional, "the answer is not JSON", max_bytes, refusable)
        try:
            return loads_json(body) if body else {}
        except ValueError:
            raise self.error(step, "the answer is not JSON") from None

    def request_bytes(
        self, step: str, call: Callable[..., Any], *args: Any, optional: bool = False, max_bytes: int | None = None,
        refusable: tuple[int, ...] = NOT_CHECKED_STATUSES, truncate: bool = False, **kwargs: Any
    ) -> bytes:
        """Like ``request``, for answers that are not JSON (``pods/log``): the body as bytes.
        ``refusable``: the statuses an optional read turns into ``Refused`` (``ANY_STATUS``: all);
        ``truncate``: a body over ``max_bytes`` is cut there (one byte more than the limit is
        returned, so the caller can tell) instead of being an error."""
        return self._send(step, call, args, kwargs, optional, "the answer cannot be read", max_bytes, refusable, truncate)

    def _send(
        self,
        step: str,
        call: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        optional: bool,
        bad_answer: str,
        max_bytes: int | None,
        refusable: tuple[int, ...] = NOT_CHECKED_STATUSES,
        truncate: bool = False,
    ) -> bytes:
        import urllib3
        from kubernetes.client.exceptions import ApiException

        from imagelint import deadline
        from imagelint.deadline import DeadlineExceeded

        limit = MAX_RESPONSE_BYTES if max_bytes is None else max_bytes
        try:
            left = deadline.remaining()
            if left is not None and left <= 0:
                raise self.error(step, deadline.message())
            timeout = self.timeout if left is None else (min(self.timeout[0], left), min(self.timeout[1], left))
            response = call(*args, _preload_content=False, _request_timeout=timeout, **kwargs)
            return self._bounded_body(response, limit, step, truncate)
        except DeadlineExceeded:
            raise self.error(step, deadline.message()) from None
        except ApiException as exc:
            status = exc.status or 0
            if optional and status in refusable:
                raise Refused(status, _server_message(exc.body)) from None
            if status == 0:  # the client wraps TLS failures this way
                reason = _tls_reason(str(exc.reason or ""))
            else:
                reason = f"{status} {_STATUS_TEXT.get(status, exc.reason or '')}".strip()
                if status == 401:
                    reason += " (the kubeconfig's credentials were rejected)"
                elif status == 403:
                    reason += " (the credentials lack permission for this)"
            raise self.error(step, reason) from None
        except urllib3.exceptions.MaxRetryError as exc:
            raise self.error(step, _out_of_time() or _network_reason(exc.reason, self.timeout)) from None
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise self.error(step, _out_of_time() or _network_reason(exc, self.timeout)) from None
        except ValueError:
            raise self.error(step, bad_answer) from None

    def _bounded_body(self, response: Any, limit: int, step: str, truncate: bool = False) -> bytes:
        """The body, read at most ``limit`` bytes (+1 to tell "exactly" from "more")."""
        if not callable(getattr(response, "read", None)):  # an already-read response object
            body = bytes(response.data or b"")
        else:
            from imagelint import deadline

            parts: list[bytes] = []
            total = 0
            try:
                while total <= limit:  # in pieces: the run's deadline is checked between them
                    deadline.check(step)
                    chunk = response.read(min(1 << 16, limit + 1 - total))
                    if not chunk:
                        break
                    parts.append(chunk)
                    total += len(chunk)
            finally:
                response.close()  # unread bytes are dropped with the connection
            body = b"".join(parts)
        if len(body) > limit and not truncate:
            raise self.error(step, f"the answer is larger than {_size(limit)}; stopped reading")
        return body[: limit + 1]

    def error(self, step: str, reason: str) -> ClusterError:
        """``cluster SERVER: STEP: REASON``, credentials scrubbed."""
        message = f"cluster {self.server}: {step}: {reason}"
        for secret in self.secrets:
            message = message.replace(secret, "***")
        return ClusterError(message)


CLIENT_MISSING = "reading a cluster needs the Kubernetes client, which is not installed: pip install 'imagelint[cluster]'"


def require_client() -> None:
    """The ``kubernetes`` package is the ``cluster`` extra: without it, say how to get it (exit 2)."""
    import importlib.util

    try:
        found = importlib.util.find_spec("kubernetes") is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise UsageError(CLIENT_MISSING)


def connect(context: str | None, kubeconfig: str | None, timeout: tuple[float, float] | None = None) -> Connection:
    """Load the kubeconfig (or in-cluster config) and open a client; nothing is requested yet.

    ``timeout`` is (connect, read) seconds; None: ``--timeout`` when given (connect at most
    5 s), else ``DEFAULT_TIMEOUT``.
    """
    require_client()
    import urllib3
    from kubernetes import client

    from imagelint import deadline

    if timeout is None:
        read = deadline.request_timeout(DEFAULT_TIMEOUT[1])
        timeout = (min(DEFAULT_TIMEOUT[0], read), read)
    loaded = load_client_configuration(context, kubeconfig, timeout[1])
    configuration = loaded.configuration
    # No retries: a stalled server must cost one timeout, not four, and urllib3
    # logs each retry as a stray warning line on stderr.
    configuration.retries = urllib3.Retry(total=0, connect=0, read=0, status=0, redirect=0)
    secrets = tuple(
        s
        for value in (configuration.api_key or {}).values()
        for s in (str(value), str(value).split(" ", 1)[-1])
        if s and len(s) >= 4
    ) + tuple(s for s in (configuration.password,) if s)
    parts = urlsplit(configuration.host or "")
    server = f"{parts.scheme}://{parts.hostname or ''}{':' + str(parts.port) if parts.port else ''}{parts.path}".rstrip("/")
    return Connection(
        api_client=client.ApiClient(configuration),
        server=server or "the API server",
        context=loaded.context,
        namespace=loaded.namespace,
        secrets=secrets,
        timeout=timeout,
    )


def _server_message(body: Any) -> str:
    """The ``message`` of the API server's Status body (untrusted: cleaned, bounded), or ""."""
    from imagelint.cluster.objects import clean

    try:
        data = loads_json(body) if isinstance(body, (str, bytes)) and body else None
    except ValueError:
        return ""
    message = data.get("message") if isinstance(data, dict) else None
    return clean(message, 300) if isinstance(message, str) else ""


def _out_of_time() -> str | None:
    """The deadline's words when a timeout was the run's deadline (the request's bound was cut to it)."""
    from imagelint import deadline

    left = deadline.remaining()
    return deadline.message() if left is not None and left <= 0.05 else None


def _size(n: int) -> str:
    return f"{n / 2**20:g} MiB" if n >= 2**20 else f"{n} bytes"


def _tls_reason(text: str) -> str:
    detail = re.search(r"certificate verify failed: ([^(\]'\"]+)", text)
    if detail:
        return f"TLS verification failed ({detail.group(1).strip()})"
    return "TLS handshake failed"


def _network_reason(error: Any, timeout: tuple[float, float]) -> str:
    import urllib3

    if isinstance(error, urllib3.exceptions.SSLError):
        return _tls_reason(str(error))
    if isinstance(error, (urllib3.exceptions.ReadTimeoutError,)):
        return f"no answer within {timeout[1]:g}s (read timeout)"
    # NewConnectionError subclasses ConnectTimeoutError in urllib3 2: test it first.
    if isinstance(error, urllib3.exceptions.NewConnectionError):
        text = str(error)
        if "refused" in text.lower():
            return "connection refused"
        if "Name or service not known" in text or "nodename nor servname" in text:
            return "host name not found"
        if "timed out" not in text:
            return "cannot connect"
    if isinstance(error, urllib3.exceptions.ConnectTimeoutError):
        return f"no connection within {timeout[0]:g}s (connect timeout)"
    if isinstance(error, urllib3.exceptions.ProtocolError):
        return "connection dropped"
    if isinstance(error, TimeoutError):
        return "timed out"
    return f"cannot reach it ({error.__class__.__name__})"


__all__ = [
    "ANY_STATUS",
    "DEFAULT_TIMEOUT",
    "LIST_PAGE_SIZE",
    "MAX_LOG_BYTES",
    "MAX_LIST_PAGES",
    "MAX_RESPONSE_BYTES",
    "NOT_IN_DUMP",
    "Connection",
    "Fetched",
    "Listing",
    "Refused",
    "connect",
    "status_text",
]
