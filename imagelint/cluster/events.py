"""Warning events (``FailedScheduling``, ``FailedCreatePodSandBox``, ``FailedCreate``...), for doctor.

``read_warning_events(conn, namespace)`` lists ``type=Warning`` events (the server filters
with a field selector; the reader checks again) into frozen :class:`EventInfo` rows naming the
object they are about. 403/404 → ``refused``.

Events written through events.k8s.io/v1 (the scheduler's ``FailedScheduling``) read through
core/v1 have ``count``, ``firstTimestamp`` and ``lastTimestamp`` null and ``eventTime`` (and
``series.lastObservedTime`` when repeated) set; the controller-manager's are the other way
round. ``seen`` is whichever says when the event last happened, parsed once here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from imagelint.cluster.objects import mapping, number, text
from imagelint.cluster.resources import EVENTS
from imagelint.cluster.source import ObjectSource


@dataclass(frozen=True)
class EventInfo:
    """One Warning event: the object it is about, its reason and message, and when it last happened."""

    namespace: str
    object_kind: str  # involvedObject.kind: Pod, ReplicaSet, DaemonSet, Node...
    object_name: str
    reason: str
    message: str
    count: int
    last_seen: str  # as served
    seen: datetime | None  # last_seen parsed (None: no timestamp at all)

    @property
    def about(self) -> tuple[str, str, str]:
        return (self.object_kind, self.namespace, self.object_name)


@dataclass(frozen=True)
class EventListing:
    """The Warning events listed, or the status the list was refused with (403/404)."""

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
    last_seen = next((t for t in (text(obj, "lastTimestamp", limit=40), text(obj, "series", "lastObservedTime", limit=40),
                                   text(obj, "eventTime", limit=40), text(obj, "firstTimestamp", limit=40),
                                   text(obj, "metadata", "creationTimestamp", limit=40)) if t), "")
    return EventInfo(
        namespace=text(involved, "namespace", limit=253) or text(obj, "metadata", "namespace", limit=253),
        object_kind=text(involved, "kind", limit=100),
        object_name=text(involved, "name", limit=253),
        reason=reason,
        message=text(obj, "message"),
        count=number(obj, "count") or number(obj, "series", "count") or 1,
        last_seen=last_seen,
        seen=_parse_time(last_seen),
    )


def _parse_time(value: str) -> datetime | None:
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def latest_first(events: list[EventInfo]) -> list[EventInfo]:
    """Newest first by ``seen`` (events without a time last, in list order)."""
    oldest = datetime.min.replace(tzinfo=timezone.utc)
    return sorted(events, key=lambda e: e.seen or oldest, reverse=True)


def read_warning_events(conn: ObjectSource, namespace: str | None = None) -> EventListing:
    listing = conn.list_objects(EVENTS, namespace, field_selector="type=Warning", optional=True)
    if not listing.checked:
        return EventListing(refused=listing.refused)
    return EventListing(events=tuple(e for e in map(event_from_object, listing.items) if e is not None))


__all__ = ["EventInfo", "EventListing", "event_from_object", "latest_first", "read_warning_events"]
