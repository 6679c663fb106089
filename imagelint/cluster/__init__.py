"""Reading a live Kubernetes cluster with the official ``kubernetes`` client (read-only, except
``policy_reports.py`` when ``audit --write-reports`` asks for it).

Layout — one connection, small readers on top of it:

  kubeconfig.py        kubeconfig contexts (exec plugins included) or in-cluster config
  connection.py        ``connect()`` → ``Connection``: timeouts, no retries, error mapping to
                       one-line ``ClusterError``s with credentials scrubbed, pagination, and
                       "403/404 → not checked" for optional reads
  resources.py         the kinds read (``Resource``: group, version, plural, namespaced)
  nodes.py             nodes → node pools (GFD labels, allocatable resources, taints)
  operator.py          device plugin / container toolkit DaemonSets and the ClusterPolicy
  runtime_classes.py   RuntimeClasses and which one a node's pods get
  configmaps.py        one ConfigMap key's text
  matrix_configmap.py  ``--matrix cluster[:NS/NAME]``: the published matrix
  nvidia_names.py      GFD / NFD label names and component image names, from the matrix
  read_target.py       ``target_from_cluster``: all of the above → a Target
  workloads.py         pods and workload templates → the containers a cluster runs (audit)
  fleet.py             ``read_fleet``: target + node → pool + workload containers, one connection
  pull_secrets.py      ``audit --use-pull-secrets``: registry credentials, in memory only
  policy_reports.py    ``audit --write-reports``: the one writer (create / replace PolicyReports)

  For ``imagelint doctor`` (each read optional, frozen rows out, ``objects.py`` type-checks JSON):
  node_status.py       every node as it is: labels, taints, allocatable, Ready, runtime handlers
  pods.py              pods: phase, node, scheduling condition, container states (spec kept for static/)
  events.py            Warning events, with the object they are about
  pod_logs.py          a bounded log tail of one container (``previous`` for CrashLoopBackOff)
  daemonset_status.py  DaemonSets with desired/ready counts and the NVIDIA component they run
  configmap_data.py    every key of one ConfigMap (app configs mounted into pods)
  dra.py               DeviceClasses, ResourceSlices (devices and attributes), ResourceClaims and
                       their templates (404 = not served)

  Where doctor's objects come from (``source.py``: ``ObjectSource``, one interface, two sources):
  connection.py        the live API server
  dump.py              ``DumpSource``: a dump's objects by kind; a kind it lacks is NOT_IN_DUMP
  dump_formats.py      ``read_dump(path)``: kubectl -o yaml/json, cluster-info dump (directory or
                       stdout), the GPU Operator's must-gather, a target snapshot
  dump_describe.py     nodes back from ``kubectl describe nodes`` text (must-gather)

Adding a reader (pods, events, logs, DRA's ResourceSlices / DeviceClasses / ResourceClaims):

1. Name the kind in ``resources.py``, e.g.
   ``RESOURCE_SLICES = Resource("resource.k8s.io", "v1", "resourceslices", "ResourceSlice", "ResourceSlices")``
   (a named API group is served generically through ``CustomObjectsApi``; core kinds give
   ``core_name``, the ``CoreV1Api`` method stem such as ``"pod"``).
2. Write ``read_<things>(conn, ...)`` in a module of its own, on the generic API::

       with connect(context, kubeconfig) as conn:
           listing = conn.list_objects(PODS, "gpu-ops", label_selector="app=x", optional=True)
           if not listing.checked:        # 403 Forbidden / 404 Not Found: not checked
               warnings.append(f"cannot list pods ({status_text(listing.refused)}); not checked")
           for pod in listing.items: ...  # plain JSON mappings: untrusted, check every type

   ``list_objects`` follows ``continue`` tokens (``LIST_PAGE_SIZE`` a page, at most
   ``MAX_LIST_PAGES`` pages; no answer is read past ``MAX_RESPONSE_BYTES``, or the
   ``max_bytes`` a call gives: pass a small one for logs); ``get_object(resource, name, namespace, optional=...)`` reads one
   object; ``conn.request(step, call, *args, optional=...)`` / ``request_bytes`` run any other
   typed-client call (``CoreV1Api.read_namespaced_pod_log``) with the same timeouts and error
   mapping. Without ``optional``, any failure is a ``ClusterError`` (exit 3) naming the server
   and the step; ``conn.error(step, reason)`` makes one for what a reader finds wrong itself.
3. Turn objects into frozen dataclasses in the reader; rules and reports never see raw objects.
   Objects are untrusted: read each one inside ``try: ... except resources.MALFORMED`` and leave
   one that does not fit the API out with a warning (``operator.py``, ``nodes.py`` do), so a
   strange object never becomes a traceback or stops the run.

The ``kubernetes`` package is imported only inside calls (start-up speed:
``tests/speed/test_startup.py``), so importing this package is cheap.
"""

from __future__ import annotations

from imagelint.cluster.configmaps import read_configmap, read_configmap_key
from imagelint.cluster.connection import (
    DEFAULT_TIMEOUT,
    Connection,
    Fetched,
    Listing,
    Refused,
    connect,
    status_text,
)
from imagelint.cluster.matrix_configmap import (
    matrix_from_cluster,
    parse_cluster_matrix_selector,
)
from imagelint.cluster.nodes import pools_from_nodes
from imagelint.cluster.read_target import target_from_cluster
from imagelint.cluster.resources import Resource

__all__ = [
    "DEFAULT_TIMEOUT",
    "Connection",
    "Fetched",
    "Listing",
    "Refused",
    "Resource",
    "connect",
    "matrix_from_cluster",
    "parse_cluster_matrix_selector",
    "pools_from_nodes",
    "read_configmap",
    "read_configmap_key",
    "status_text",
    "target_from_cluster",
]
