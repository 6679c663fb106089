"""Warning events (``FailedScheduling``, ``FailedCreatePodSandBox``, ``FailedCreate``...), for doctor.

``read_warning_events(conn, namespace)`` lists ``type=Warning`` events (the server filters
with a field selector; the reader checks again) into frozen :class:`EventInfo` rows naming the
object they are about. 403/404 → ``refused``.
"""

from __future__ import annotations

from typing import Any, Mapping

from imagelint.cluster.connection import Connection
from imagelint.cluster.objects import mapping, number, text
from imagelint.cluster.resources import EVENTS
from dataclasses import dataclass


@dataclass(frozen=True)
class EventInfo:
    namespace: str
    object_kind: str  # involvedObject.kind: Pod, ReplicaSet, DaemonSet, Node...
    object_name: str
    reason: str
    message: str
    count: int
    last_seen: str

    @property
    def about(self) -> tuple[str, str, str]:
        return (self.object_kind, self.namespace, self.object_name)


@dataclass(frozen=True)
class EventListing:
    events: tuple[EventInfo, ...] = ()
    refused: int | None = None

    @property
    def checked(self) -> bool:
        return self.refused is None


def event_from_object(obj: Mapping[str, Any]) -> EventInfo | None:
    involved = mapping(obj, "involvedObject")
    reason = text(obj, "reason", limit=200)
    if not reason or text(obj, "type", limit=40) != "Warning":
        return None
    return EventInfo(
        namespace=text(involved, "namespace", limit=253) or text(obj, "metadata", "namespace", limit=253),
        object_kind=text(involved, "kind", limit=100),
        object_name=text(involved, "name", limit=253),
        reason=reason,
        message=text(obj, "message"),
        count=number(obj, "count") or 1,
        last_seen=text(obj, "lastTimestamp", limit=40) or text(obj, "eventTime", limit=40),
    )


def read_warning_events(conn: Connection, namespace: str | None = None) -> EventListing:
    listing = conn.list_objects(EVENTS, namespace, field_selector="type=Warning", optional=True)
    if not listing.checked:
        return EventListing(refused=listing.refused)
    return EventListing(events=tuple(e for e in map(event_from_object, listing.items) if e is not None))


__all__ = ["EventInfo", "EventListing", "event_from_object", "read_warning_events"]
