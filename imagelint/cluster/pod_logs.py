"""The last lines of one container's log (``pods/log``), bounded in lines and bytes.

Used by doctor on NVIDIA component pods that are not Ready (the device plugin's last lines
say whether NVML initialised). ``previous=True`` reads the crashed instance's log, which is
what ``CrashLoopBackOff`` hides. Lines are decoded leniently and cleaned of control
characters (a log is written by whatever runs in the pod).
"""

from __future__ import annotations


from imagelint.cluster.connection import Connection, Refused
from imagelint.cluster.objects import clean
from dataclasses import dataclass

TAIL_LINES = 60
LIMIT_BYTES = 64 * 1024
MAX_LINE = 500


@dataclass(frozen=True)
class LogTail:
    lines: tuple[str, ...] = ()
    refused: int | None = None  # 403: no get on pods/log; 404: no such container instance

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
    try:
        data = conn.request_bytes(step, call, pod, namespace, optional=True, **kwargs)
    except Refused as refused:
        return LogTail(refused=refused.status)
    text = data[:limit_bytes].decode("utf-8", errors="replace")
    return LogTail(lines=tuple(clean(line, MAX_LINE) for line in text.splitlines()[-tail_lines:] if line.strip()))


__all__ = ["LIMIT_BYTES", "TAIL_LINES", "LogTail", "read_log_tail"]
