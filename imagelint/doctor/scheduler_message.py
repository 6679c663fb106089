"""The scheduler's ``FailedScheduling`` message read as what it is: counts of nodes per reason.

``0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient nvidia.com/gpu.
no new claims to deallocate, preemption: ...`` says that *some* node(s) lack the GPUs — the
CPU-only nodes that have none at all are counted there too — not which. ``parse_reasons`` gives
each reason with its count, the resource of an ``Insufficient`` reason, and the taint of the
older form (``had untolerated taint {dedicated: infra}``; since 1.3x the key is no longer named).
Only the part before the preemption clause is read (its counts are about victims).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from imagelint.lazyre import lazy_pattern

_AVAILABLE = lazy_pattern(r"\d+/(\d+) nodes are available: (.*)", re.S)
_REASON = lazy_pattern(r"(?<![0-9])([0-9]{1,9}) (.+?)(?=, \d+ |$)", re.S)  # a count int() can always read
_INSUFFICIENT = lazy_pattern(r"Insufficient ([A-Za-z0-9./_-]+)")
_OLD_TAINT = lazy_pattern(r"had untolerated taint \{([^:}]+): ?([^}]*)\}")


@dataclass(frozen=True)
class Reason:
    """One reason of a scheduler ``FailedScheduling`` message, and the number of nodes it ruled out."""

    count: int
    text: str
    resource: str = ""  # Insufficient RESOURCE
    taint_key: str = ""  # the older taint form names it; "" in the newer form

    @property
    def is_taint(self) -> bool:
        return "untolerated taint" in self.text


def parse_reasons(message: str) -> tuple[Reason, ...]:
    found = _AVAILABLE.search(message)
    if found is None:
        return ()
    head = found.group(2)
    # the per-node part ends at the first sentence end (a resource name's dots have no space after)
    head = re.split(r"\.(?:\s|$)", head, maxsplit=1)[0]
    reasons = []
    for match in _REASON.finditer(head):
        text = match.group(2).strip()
        insufficient = _INSUFFICIENT.search(text)
        taint = _OLD_TAINT.search(text)
        reasons.append(Reason(int(match.group(1)), text, insufficient.group(1) if insufficient else "",
                              taint.group(1).strip() if taint else ""))
    return tuple(reasons)


LIFECYCLE_TAINT_PREFIX = "node.kubernetes.io/"  # not-ready, unreachable, unschedulable...: set by Kubernetes itself


def is_lifecycle_taint(key: str) -> bool:
    """A taint the node lifecycle controller (or kubelet) sets and removes: never a toleration to add."""
    return key.startswith(LIFECYCLE_TAINT_PREFIX)


__all__ = ["LIFECYCLE_TAINT_PREFIX", "Reason", "is_lifecycle_taint", "parse_reasons"]
