"""The last lines of one container's log (``pods/log``), bounded in lines and bytes.

Used by doctor on NVIDIA component pods that are not Ready (the device plugin's last lines
say whether NVML initialised). ``previous=True`` reads the crashed instance's log, which is
what ``CrashLoopBackOff`` hides. Lines are decoded leniently and cleaned of control
characters (a log is written by whatever runs in the pod).

A log is evidence, never a precondition: the API server proxies ``pods/log`` to the node's
kubelet, so on exactly the broken nodes it answers 500 (kubelet unreachable) or 400 (no
previous instance, container still waiting to start). Every such answer comes back as a
:class:`LogTail` with ``refused`` and the server's words in ``reason``; the run goes on. A
server that sends more than ``limitBytes`` is read up to the connection's ``MAX_LOG_BYTES``
and the tail is marked ``truncated``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from imagelint.cluster.connection import ANY_STATUS, MAX_LOG_BYTES, Connection, Refused
from imagelint.cluster.objects import clean
from imagelint.errors import ClusterError

TAIL_LINES = 60
LIMIT_BYTES = MAX_LOG_BYTES
MAX_LINE = 500


@dataclass(frozen=True)
class LogTail:
    """The last lines of one container's log, or why the API server (or the kubelet) did not give them."""

    lines: tuple[str, ...] = ()
    refused: int | None = None  # 403: no get on pods/log; 404: no such pod; 400/500: the kubelet's answer; 0: no answer
    reason: str = ""  # the server's message when refused (cleaned)
    truncated: bool = False  # the server sent more than asked for: only the first bytes were read

    @property
    def checked(self) -> bool:
        return self.refused is None


def read_log_tail(
    conn: Connection, namespace: str, pod: str, container: str, *, previous: bool = False,
    tail_lines: int = TAIL_LINES, limit_bytes: int = LIMIT_BYTES,
) -> LogTail:
    from kubernetes import client

    call = client.CoreV1Api(conn.api_client).read_namespaced_pod_log
    step = f"reading the log of pod {namespace}/{pod} container {container}" + (" (previous)" if previous else "")
    kwargs = {"container": container, "tail_lines": tail_lines, "limit_bytes": limit_bytes}
    if previous:
        kwargs["previous"] = True
    limit = min(limit_bytes, MAX_LOG_BYTES)
    try:
        data = conn.request_bytes(step, call, pod, namespace, optional=True, max_bytes=limit,
                                  refusable=ANY_STATUS, truncate=True, **kwargs)
    except Refused as refused:
        return LogTail(refused=refused.status, reason=refused.message)
    except ClusterError as exc:
        if deadline_passed():
            raise  # the run's own deadline: every later read would fail the same way
        # a proxy to a kubelet that never answers (read timeout), a dropped connection: no status
        return LogTail(refused=0, reason=exc.message.rsplit(": ", 1)[-1])
    truncated = len(data) > limit
    text = data[:limit].decode("utf-8", errors="replace")
    lines = text.splitlines()
    if truncated:
        # The server ignored the tail asked for: what was read is the log's head, every line of it
        # (bounded by the bytes) is evidence; the last one is cut mid-line.
        lines = lines[:-1]
    else:
        lines = lines[-tail_lines:]
    return LogTail(lines=tuple(clean(line, MAX_LINE) for line in lines if line.strip()), truncated=truncated)


def log_tail_of(source: Any, namespace: str, pod: str, container: str, *, previous: bool = False) -> LogTail:
    """The log tail from whichever source doctor reads: a dump answers from the logs it holds
    (``DumpSource.log_tail``), the live API server through ``pods/log``."""
    own = getattr(source, "log_tail", None)
    if callable(own):
        return own(namespace, pod, container, previous=previous)
    return read_log_tail(source, namespace, pod, container, previous=previous)


def deadline_passed() -> bool:
    from imagelint import deadline

    left = deadline.remaining()
    return left is not None and left <= 0


__all__ = ["LIMIT_BYTES", "TAIL_LINES", "LogTail", "log_tail_of", "read_log_tail"]
