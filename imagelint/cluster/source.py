"""Where doctor's objects come from: one small interface, two implementations.

An :class:`ObjectSource` lists and gets objects by :class:`~imagelint.cluster.resources.Resource`;
a container's log comes through ``pod_logs.log_tail_of`` (a dump answers from the logs it holds,
its ``log_tail``; the live server through ``pods/log``). :class:`~imagelint.cluster.connection.Connection` is the live one
(the API server); :class:`~imagelint.cluster.dump.DumpSource` answers from a dump someone sent
(``kubectl get -o yaml``, ``kubectl cluster-info dump``, the GPU Operator's must-gather). Every
reader (nodes, pods, events, DaemonSets, DRA, logs) takes either, so the live and the dump run
build one model and the stages cannot tell them apart — except for what a dump does not hold:
a kind that was not dumped answers ``refused=NOT_IN_DUMP``, which the stages say as "not in the
dump" (never "ok", never "none").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from imagelint.cluster.connection import (
    NOT_IN_DUMP,  # a kind (or log) a dump does not hold
)

if TYPE_CHECKING:
    from imagelint.cluster.connection import Fetched, Listing
    from imagelint.cluster.resources import Resource
    from imagelint.errors import ClusterError


class ObjectSource(Protocol):
    @property
    def server(self) -> str: ...  # for messages: the API server URL, or "dump PATH"
    @property
    def context(self) -> str: ...  # kubeconfig context, or "" for a dump
    @property
    def namespace(self) -> str: ...  # the context's namespace (a dump: "default")

    def list_objects(self, resource: Resource, namespace: str | None = None, *, label_selector: str | None = None,
                     field_selector: str | None = None, optional: bool = False, step: str | None = None) -> Listing: ...

    def get_object(self, resource: Resource, name: str, namespace: str | None = None, *, optional: bool = False,
                   step: str | None = None) -> Fetched: ...

    def error(self, step: str, reason: str) -> ClusterError: ...


__all__ = ["NOT_IN_DUMP", "ObjectSource"]
