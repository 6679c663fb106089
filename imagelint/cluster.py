"""Read the target from a live Kubernetes cluster (official ``kubernetes`` client).

What is read, and why:
  * nodes: GPU Feature Discovery labels (driver, the driver's CUDA version, GPU
    product / compute capability / family / count, MIG strategy), the arch label,
    allocatable ``nvidia.com/*`` resources, taints. Nodes without GPU labels or
    resources are ignored; nodes with the same stack collapse into one pool.
  * DaemonSets (all namespaces): the device plugin and container toolkit actually
    deployed, their version (image tag) and settings (env / args).
  * RuntimeClasses: handler names (pods pick the NVIDIA runtime by class).
  * the GPU Operator's ClusterPolicy (``nvidia.com/v1``), where present: fills the
    toolkit / plugin versions and settings when the DaemonSets cannot be read.

Failures to list nodes end the run (``ClusterError``, exit 3, one line naming the
API server and the step). A 403/404 on the optional reads becomes a warning on the
Target. Credentials never appear in a message.

Label names below are GFD's (NVIDIA/k8s-device-plugin ``internal/lm``; see
``/work/shared/reference/gfd-labels.json``).
"""

from __future__ import annotations

import dataclasses
import fnmatch
import functools
import json
import os
import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable, Iterable, Mapping, Sequence
from urllib.parse import urlsplit

from imagelint.errors import ClusterError, ConfigError, UsageError
from imagelint.target import GpuSpec, NodePool, Target, Taint
from imagelint.targets import (
    TargetMatrix,
    cuda_for,
    merge_targets,
    parse_driver_version,
    resolve_gpu,
)

# (connect, read) seconds for every API call: a dead or stalled API server must
# fail the run quickly, not hang CI.
DEFAULT_TIMEOUT: tuple[float, float] = (5.0, 20.0)

# GFD label names, the GPU product suffixes GFD appends, the NFD PCI label and the device-plugin /
# toolkit image names are NVIDIA facts: they live in the matrix (``nvidia_names``, every row with its
# source) and are read once, lazily, through ``_nvidia()`` below. Kubernetes' and clouds' own label
# names stay here.
LABEL_ARCH = ("kubernetes.io/arch", "beta.kubernetes.io/arch")

# Labels kept on a pool: what a rule or a human may match on. Everything else
# (hostname, zone, per-node ids) would stop identical nodes from collapsing.
# (The NVIDIA ones, GFD's and NFD's PCI label, come from the matrix: _NvidiaNames.kept_labels.)
_KEPT_LABELS = ("kubernetes.io/arch", "kubernetes.io/os", "node.kubernetes.io/instance-type")
# Taints the control plane sets and lifts on its own (not-ready, cordon...): not part of a pool.
_TRANSIENT_TAINT_PREFIXES = ("node.kubernetes.io/", "node.cloudprovider.kubernetes.io/", "ToBeDeletedByClusterAutoscaler")
# Cloud node-group labels: a pool takes its name from one when all its nodes share it.
_NODE_GROUP_LABELS = (
    "cloud.google.com/gke-nodepool",
    "eks.amazonaws.com/nodegroup",
    "karpenter.sh/nodepool",
    "kubernetes.azure.com/agentpool",
    "agentpool",
    "node.kubernetes.io/pool",
)

_IMAGE_VERSION = re.compile(r"^v?(\d+\.\d+\.\d+(?:-rc\.\d+)?)")


# --- NVIDIA names, from the matrix --------------------------------------------------


def _any_match(patterns: tuple[str, ...]) -> "re.Pattern[str]":
    """One regex for ``*`` globs (``*`` spans anything, "/" included)."""
    return re.compile("|".join(fnmatch.translate(p) for p in patterns))


def _with_profile(template: str) -> "re.Pattern[str]":
    """``"-MIG-{profile}"`` -> a regex capturing the MIG profile (``1g.5gb``) where it stands."""
    head, _, tail = template.partition("{profile}")
    return re.compile(re.escape(head) + r"(\d+g\.\d+gb)" + re.escape(tail))


@dataclass(frozen=True)
class _NvidiaNames:
    driver_full: str
    driver_parts: tuple[str, ...]
    driver_parts_deprecated: tuple[str, ...]
    cuda_full: str  # despite GFD's name (cuda.runtime-version): the DRIVER's CUDA version
    cuda_parts: tuple[str, ...]
    cuda_parts_deprecated: tuple[str, ...]
    product: str
    compute_capability: tuple[str, ...]  # (major, minor)
    family: str
    count: str
    mig_strategy: str
    gpu_node_labels: "re.Pattern[str]"  # labels only GFD writes, on GPU nodes
    product_shared: "re.Pattern[str]"  # "-SHARED" at the end of gpu.product (time-slicing/MPS)
    product_mig: "re.Pattern[str]"  # "-MIG-<profile>" at the end of gpu.product (MIG single)
    mig_mixed_count: "re.Pattern[str]"  # nvidia.com/mig-<profile>.count (MIG mixed)
    kept_labels: "re.Pattern[str]"
    volatile_labels: "re.Pattern[str]"  # change over time or per node on the same stack
    resource_prefix: str  # "nvidia.com/"
    device_plugin_images: tuple[str, ...]  # last path component of the repository
    toolkit_images: tuple[str, ...]


@functools.lru_cache(maxsize=1)
def _nvidia() -> _NvidiaNames:
    from imagelint.matrix.shipped import device_plugin_naming, nvidia_name

    def values(name: str) -> tuple[str, ...]:
        return nvidia_name(name).values

    def one(name: str) -> str:
        return values(name)[0]

    return _NvidiaNames(
        driver_full=one("gfd-driver-version"),
        driver_parts=values("gfd-driver-version-parts"),
        driver_parts_deprecated=values("gfd-driver-version-parts-deprecated"),
        cuda_full=one("gfd-driver-cuda-version"),
        cuda_parts=values("gfd-driver-cuda-version-parts"),
        cuda_parts_deprecated=values("gfd-driver-cuda-version-parts-deprecated"),
        product=one("gfd-gpu-product"),
        compute_capability=values("gfd-gpu-compute-capability"),
        family=one("gfd-gpu-family"),
        count=one("gfd-gpu-count"),
        mig_strategy=one("gfd-mig-strategy"),
        gpu_node_labels=_any_match(values("gfd-gpu-node-labels")),
        product_shared=re.compile(re.escape(one("gfd-product-shared-suffix")) + "$"),
        product_mig=re.compile(_with_profile(one("gfd-product-mig-suffix")).pattern + "$"),
        mig_mixed_count=re.compile("^" + _with_profile(one("gfd-mig-mixed-count")).pattern + "$"),
        kept_labels=_any_match(values("gfd-label-prefix") + values("nfd-nvidia-pci-label")),
        volatile_labels=_any_match(values("gfd-volatile-labels")),
        resource_prefix=device_plugin_naming().prefix + "/",
        device_plugin_images=values("device-plugin-images"),
        toolkit_images=values("toolkit-images"),
    )


# The label constants this module used to define, for code that imported them.
_LEGACY_NAMES = {
    "LABEL_DRIVER_FULL": "driver_full", "LABEL_DRIVER_PARTS": "driver_parts",
    "LABEL_DRIVER_PARTS_DEPRECATED": "driver_parts_deprecated", "LABEL_CUDA_FULL": "cuda_full",
    "LABEL_CUDA_PARTS": "cuda_parts", "LABEL_CUDA_PARTS_DEPRECATED": "cuda_parts_deprecated",
    "LABEL_PRODUCT": "product", "LABEL_CC": "compute_capability", "LABEL_FAMILY": "family",
    "LABEL_COUNT": "count", "LABEL_MIG_STRATEGY": "mig_strategy",
}


def __getattr__(attribute: str) -> Any:
    if attribute in _LEGACY_NAMES:
        return getattr(_nvidia(), _LEGACY_NAMES[attribute])
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")


# --- connecting ----------------------------------------------------------------------


@dataclass(frozen=True)
class _Connection:
    api_client: Any
    server: str  # API server URL without any userinfo, for messages
    context: str  # context name, or "in-cluster"
    namespace: str  # the context's namespace (or the pod's)
    secrets: tuple[str, ...]  # never printed: scrubbed from messages as a last guard
    timeout: tuple[float, float]


def _kubeconfig_paths(kubeconfig: str | None) -> list[str]:
    if kubeconfig:
        return [kubeconfig]
    env = os.environ.get("KUBECONFIG")
    if env:
        return [p for p in env.split(os.pathsep) if p]
    return [os.path.expanduser("~/.kube/config")]


def _connect(context: str | None, kubeconfig: str | None, timeout: tuple[float, float]) -> _Connection:
    import urllib3
    from kubernetes import client, config
    from kubernetes.config.config_exception import ConfigException

    configuration = client.Configuration()
    paths = _kubeconfig_paths(kubeconfig)
    existing = [p for p in paths if os.path.exists(p)]
    namespace = "default"
    if kubeconfig and not existing:
        raise ClusterError(f"kubeconfig {kubeconfig}: no such file")
    try:
        if existing:
            config_file = kubeconfig or os.pathsep.join(existing)
            config.load_kube_config(
                config_file=config_file, context=context, client_configuration=configuration, persist_config=False
            )
            contexts, active = config.list_kube_config_contexts(config_file=config_file)
            chosen = next((c for c in contexts if c.get("name") == context), active) if context else active
            context_name = (chosen or {}).get("name") or "current-context"
            namespace = ((chosen or {}).get("context") or {}).get("namespace") or "default"
        elif os.environ.get("KUBERNETES_SERVICE_HOST"):
            if context:
                raise UsageError("--context needs a kubeconfig; none found and running in-cluster")
            config.load_incluster_config(client_configuration=configuration)
            context_name = "in-cluster"
            try:
                with open("/var/run/secrets/kubernetes.io/serviceaccount/namespace", encoding="utf-8") as handle:
                    namespace = handle.read().strip() or "default"
            except OSError:
                pass
        else:
            raise ClusterError(f"no kubeconfig ({', '.join(paths)} not found) and not running inside a cluster")
    except ConfigException as exc:
        where = kubeconfig or ", ".join(existing) or "in-cluster config"
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else exc.__class__.__name__
        raise ClusterError(f"kubeconfig {where}: {first_line[:200]}") from None
    except (OSError, ValueError, TypeError) as exc:  # unreadable file, bad base64 data, exec plugin failure
        where = kubeconfig or ", ".join(existing) or "in-cluster config"
        raise ClusterError(f"kubeconfig {where}: cannot load ({exc.__class__.__name__})") from None

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
    return _Connection(
        api_client=client.ApiClient(configuration),
        server=server or "the API server",
        context=context_name,
        namespace=namespace,
        secrets=secrets,
        timeout=timeout,
    )


class _Forbidden(Exception):
    """An optional read was refused (403) or the API does not exist here (404)."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


def _call(conn: _Connection, step: str, request: Callable[..., Any], *args: Any, optional: bool = False, **kwargs: Any) -> Any:
    """Run one API request and return its JSON body. Any failure becomes a one-line
    ClusterError naming the server and the step; ``optional`` 403/404 → _Forbidden."""
    import urllib3
    from kubernetes.client.exceptions import ApiException

    try:
        response = request(*args, _preload_content=False, _request_timeout=conn.timeout, **kwargs)
        body = response.data
        return json.loads(body) if body else {}
    except ApiException as exc:
        status = exc.status or 0
        if optional and status in (403, 404):
            raise _Forbidden(status) from None
        if status == 0:  # the client wraps TLS failures this way
            reason = _tls_reason(str(exc.reason or ""))
        else:
            reason = f"{status} {_STATUS_TEXT.get(status, exc.reason or '')}".strip()
            if status == 401:
                reason += " (the kubeconfig's credentials were rejected)"
            elif status == 403:
                reason += " (the credentials lack permission for this)"
        raise _cluster_error(conn, step, reason) from None
    except urllib3.exceptions.MaxRetryError as exc:
        raise _cluster_error(conn, step, _network_reason(exc.reason, conn)) from None
    except (urllib3.exceptions.HTTPError, OSError) as exc:
        raise _cluster_error(conn, step, _network_reason(exc, conn)) from None
    except ValueError:
        raise _cluster_error(conn, step, "the answer is not JSON") from None


_STATUS_TEXT = {401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 500: "Internal Server Error", 503: "Service Unavailable"}


def _tls_reason(text: str) -> str:
    detail = re.search(r"certificate verify failed: ([^(\]'\"]+)", text)
    if detail:
        return f"TLS verification failed ({detail.group(1).strip()})"
    return "TLS handshake failed"


def _network_reason(error: Any, conn: _Connection) -> str:
    import urllib3

    if isinstance(error, urllib3.exceptions.SSLError):
        return _tls_reason(str(error))
    if isinstance(error, (urllib3.exceptions.ReadTimeoutError,)):
        return f"no answer within {conn.timeout[1]:g}s (read timeout)"
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
        return f"no connection within {conn.timeout[0]:g}s (connect timeout)"
    if isinstance(error, urllib3.exceptions.ProtocolError):
        return "connection dropped"
    if isinstance(error, TimeoutError):
        return "timed out"
    return f"cannot reach it ({error.__class__.__name__})"


def _cluster_error(conn: _Connection, step: str, reason: str) -> ClusterError:
    message = f"cluster {conn.server}: {step}: {reason}"
    for secret in conn.secrets:
        message = message.replace(secret, "***")
    return ClusterError(message)


# --- reading -------------------------------------------------------------------------


@dataclass(frozen=True)
class _Workload:
    """A device plugin or toolkit DaemonSet, or the ClusterPolicy's view of one."""

    kind: str  # device-plugin | toolkit
    where: str  # namespace/name, or clusterpolicy/NAME
    version: str | None
    env: Mapping[str, str]
    args: tuple[str, ...]
    node_selector: Mapping[str, str]
    node_terms: tuple[Any, ...]  # nodeAffinity nodeSelectorTerms (OR of ANDed expressions)

    def runs_on(self, labels: Mapping[str, str]) -> bool:
        if any(labels.get(k) != v for k, v in self.node_selector.items()):
            return False
        return not self.node_terms or any(_term_matches(t, labels) for t in self.node_terms)

    def setting(self, flag: str, env: str) -> str | None:
        """A plugin/toolkit setting: flag beats env (the plugin's own precedence)."""
        for index, arg in enumerate(self.args):
            if arg.startswith(f"{flag}="):
                return arg.split("=", 1)[1]
            if arg == flag and index + 1 < len(self.args):
                return self.args[index + 1]
        return self.env.get(env)


def _term_matches(term: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    for expression in term.get("matchExpressions") or ():
        key, operator, values = expression.get("key"), expression.get("operator"), expression.get("values") or []
        present = key in labels
        if operator == "In" and not (present and labels[key] in values):
            return False
        if operator == "NotIn" and present and labels[key] in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
        if operator in ("Gt", "Lt"):
            try:
                number, bound = int(labels.get(key, "")), int(values[0])
            except (ValueError, IndexError):
                return False
            if (operator == "Gt" and not number > bound) or (operator == "Lt" and not number < bound):
                return False
    return True


def _image_version(image: str) -> str | None:
    if "@" in image:
        image = image.split("@", 1)[0]
    last = image.rsplit("/", 1)[-1]
    if ":" not in last:
        return None
    match = _IMAGE_VERSION.match(last.split(":", 1)[1])
    return match.group(1) if match else None


def _image_kind(image: str) -> str | None:
    repository = image.split("@", 1)[0].rsplit("/", 1)[-1].split(":", 1)[0]
    if repository in _nvidia().device_plugin_images:
        return "device-plugin"
    if repository in _nvidia().toolkit_images:
        return "toolkit"
    return None


def _env_map(env: Iterable[Mapping[str, Any]] | None) -> dict[str, str]:
    return {e["name"]: str(e.get("value", "")) for e in env or () if isinstance(e, Mapping) and "name" in e and "value" in e}


def workloads_from_daemonsets(items: Sequence[Mapping[str, Any]], warnings: list[str]) -> list[_Workload]:
    found = []
    for ds in items:
        meta = ds.get("metadata") or {}
        where = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
        pod = ((ds.get("spec") or {}).get("template") or {}).get("spec") or {}
        affinity = ((pod.get("affinity") or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or {}
        for container in pod.get("containers") or ():
            image = str(container.get("image") or "")
            kind = _image_kind(image)
            command = " ".join(str(c) for c in (container.get("command") or []) + (container.get("args") or []))
            # GFD ships in the device plugin image (v0.15+) but is not the plugin.
            if kind is None or "feature-discovery" in where or "feature-discovery" in command:
                continue
            version = _image_version(image)
            if version is None:
                warnings.append(f"{kind} DaemonSet {where}: image {image} has no version tag; version unknown")
            found.append(
                _Workload(
                    kind=kind,
                    where=where,
                    version=version,
                    env=MappingProxyType(_env_map(container.get("env"))),
                    args=tuple(str(a) for a in (container.get("args") or [])),
                    node_selector=MappingProxyType(dict(pod.get("nodeSelector") or {})),
                    node_terms=tuple(affinity.get("nodeSelectorTerms") or ()),
                )
            )
    return sorted(found, key=lambda w: w.where)


def workloads_from_clusterpolicy(items: Sequence[Mapping[str, Any]]) -> list[_Workload]:
    found = []
    for policy in items:
        spec = policy.get("spec") or {}
        name = (policy.get("metadata") or {}).get("name", "")
        cdi = spec.get("cdi") or {}
        for kind, key in (("device-plugin", "devicePlugin"), ("toolkit", "toolkit")):
            section = spec.get(key) or {}
            if section.get("enabled") is False:
                continue
            version = section.get("version")
            env = _env_map(section.get("env"))
            if kind == "device-plugin" and (spec.get("mig") or {}).get("strategy") and "MIG_STRATEGY" not in env:
                env["MIG_STRATEGY"] = spec["mig"]["strategy"]
            if kind == "toolkit" and cdi.get("enabled") and cdi.get("default") and "NVIDIA_CONTAINER_RUNTIME_MODE" not in env:
                # ClusterPolicy cdi.default makes the operator configure the toolkit in cdi mode.
                env["NVIDIA_CONTAINER_RUNTIME_MODE"] = "cdi"
            match = _IMAGE_VERSION.match(str(version)) if version else None
            found.append(
                _Workload(
                    kind=kind,
                    where=f"clusterpolicy/{name}",
                    version=match.group(1) if match else None,
                    env=MappingProxyType(env),
                    args=(),
                    node_selector=MappingProxyType({}),
                    node_terms=(),
                )
            )
    return found


def _label_version(labels: Mapping[str, str], parts: Sequence[str]) -> str | None:
    values = [labels.get(p) for p in parts]
    if not values[0] or not values[1]:
        return None
    return ".".join(v for v in values if v)  # an empty third part means a 2-component version


def _node_is_gpu(labels: Mapping[str, str], allocatable: Mapping[str, Any]) -> bool:
    names = _nvidia()
    if any(names.gpu_node_labels.match(k) for k in labels):
        return True
    return any(k.startswith(names.resource_prefix) and _int(v) for k, v in allocatable.items())


def _int(value: Any) -> int | None:
    try:
        return int(str(value))
    except ValueError:
        return None


def _node_gpus(labels: Mapping[str, str], matrix: TargetMatrix | None) -> tuple[GpuSpec, ...]:
    names = _nvidia()
    product = labels.get(names.product)
    major, minor = labels.get(names.compute_capability[0]), labels.get(names.compute_capability[1])
    mig_profiles: list[str] = []
    if product:
        product = names.product_shared.sub("", product)
        mig = names.product_mig.search(product)
        if mig:
            mig_profiles.append(mig.group(1))
            product = product[: mig.start()]
    for key in sorted(labels):
        mixed = names.mig_mixed_count.match(key)
        if mixed:
            mig_profiles.append(mixed.group(1))
    if not product and not major:
        return ()
    spec = GpuSpec(
        product=product or None,
        compute_capability=f"{major}.{minor}" if major and minor else None,
        family=labels.get(names.family) or None,
        count=_int(labels.get(names.count, "")) if labels.get(names.count) else None,
        mig_profiles=tuple(mig_profiles),
    )
    return (resolve_gpu(spec, matrix)[0],)


def _pool_for_node(
    node: Mapping[str, Any],
    workloads: Sequence[_Workload],
    runtime_classes: Sequence[Mapping[str, Any]],
    matrix: TargetMatrix | None,
    source: str,
    warnings: list[str],
) -> NodePool | None:
    meta = node.get("metadata") or {}
    labels: Mapping[str, str] = meta.get("labels") or {}
    allocatable: Mapping[str, Any] = (node.get("status") or {}).get("allocatable") or {}
    if not _node_is_gpu(labels, allocatable):
        return None
    node_name = meta.get("name", "?")

    names = _nvidia()
    driver_text = labels.get(names.driver_full) or _label_version(labels, names.driver_parts) or _label_version(
        labels, names.driver_parts_deprecated
    )
    driver = None
    if driver_text:
        try:
            driver = parse_driver_version(driver_text, f"node {node_name} label {names.driver_full}")
        except UsageError as exc:
            warnings.append(exc.message)
    cuda = labels.get(names.cuda_full) or _label_version(labels, names.cuda_parts) or _label_version(labels, names.cuda_parts_deprecated)

    def pick(kind: str) -> _Workload | None:
        running = [w for w in workloads if w.kind == kind and not w.where.startswith("clusterpolicy/") and w.runs_on(labels)]
        if len(running) > 1 and len({w.version for w in running}) > 1:
            warnings.append(f"node {node_name}: several {kind} DaemonSets ({', '.join(w.where for w in running)}); using {running[0].where}")
        if running:
            return running[0]
        return next((w for w in workloads if w.kind == kind and w.where.startswith("clusterpolicy/")), None)

    plugin, toolkit = pick("device-plugin"), pick("toolkit")
    strategies: tuple[str, ...] = ()
    mig_strategy = labels.get(names.mig_strategy)
    if plugin:
        raw = plugin.setting("--device-list-strategy", "DEVICE_LIST_STRATEGY")
        if raw:
            strategies = tuple(s.strip() for s in raw.strip("[]").replace('"', "").split(",") if s.strip())
        mig_strategy = mig_strategy or plugin.setting("--mig-strategy", "MIG_STRATEGY")
    runtime_mode = accept = None
    if toolkit:
        mode = toolkit.env.get("NVIDIA_CONTAINER_RUNTIME_MODE")
        runtime_mode = mode if mode and mode != "auto" else None
        accept_text = toolkit.env.get("ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED")
        if accept_text:
            accept = accept_text.strip().lower() in ("1", "t", "true", "yes")

    taints = tuple(
        Taint(key=t["key"], value=t.get("value") or None, effect=t.get("effect") or "NoSchedule")
        for t in (node.get("spec") or {}).get("taints") or ()
        if t.get("key") and not str(t["key"]).startswith(_TRANSIENT_TAINT_PREFIXES)
    )
    resources = {k: n for k, v in allocatable.items() if k.startswith(names.resource_prefix) and (n := _int(v)) is not None}
    kept = {
        k: v
        for k, v in labels.items()
        if (names.kept_labels.match(k) or k in _KEPT_LABELS) and not names.volatile_labels.match(k)
    }
    runtime_class = _runtime_class_for(labels, runtime_classes)
    return NodePool(
        name="",
        driver=driver,
        cuda_driver_version=cuda or cuda_for(driver, matrix),
        gpus=_node_gpus(labels, matrix),
        arch=next((labels[k] for k in LABEL_ARCH if labels.get(k)), None),
        toolkit=toolkit.version if toolkit else None,
        runtime_mode=runtime_mode,
        accept_envvar_unprivileged=accept,
        device_plugin=plugin.version if plugin else None,
        device_list_strategy=strategies,
        mig_strategy=mig_strategy or None,
        resources=MappingProxyType(dict(sorted(resources.items()))),
        taints=taints,
        labels=MappingProxyType(dict(sorted(kept.items()))),
        runtime_class=runtime_class,
        node_count=1,
        source=source,
    )


def _runtime_class_for(labels: Mapping[str, str], runtime_classes: Sequence[Mapping[str, Any]]) -> str | None:
    """The NVIDIA RuntimeClass a pod on this node would use: handler mentions nvidia and
    its scheduling.nodeSelector (if any) matches; "nvidia" itself preferred."""
    candidates = []
    for rc in runtime_classes:
        handler = str(rc.get("handler") or "")
        selector = ((rc.get("scheduling") or {}).get("nodeSelector")) or {}
        if "nvidia" in handler and all(labels.get(k) == v for k, v in selector.items()):
            candidates.append(str((rc.get("metadata") or {}).get("name") or handler))
    if not candidates:
        return None
    return "nvidia" if "nvidia" in candidates else sorted(candidates)[0]


def _pool_key(pool: NodePool) -> tuple[Any, ...]:
    return (
        pool.driver,
        pool.cuda_driver_version,
        pool.gpus,
        pool.arch,
        pool.toolkit,
        pool.runtime_mode,
        pool.accept_envvar_unprivileged,
        pool.device_plugin,
        pool.device_list_strategy,
        pool.mig_strategy,
        tuple(pool.resources.items()),
        pool.taints,
        tuple(pool.labels.items()),
        pool.runtime_class,
    )


def _pool_name(pool: NodePool, group_names: set[str]) -> str:
    if len(group_names) == 1:
        return next(iter(group_names))
    gpu = pool.gpus[0].product if pool.gpus and pool.gpus[0].product else "gpu"
    name = f"{gpu}-{pool.driver}" if pool.driver else gpu
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name)


def pools_from_nodes(
    nodes: Sequence[Mapping[str, Any]],
    workloads: Sequence[_Workload],
    runtime_classes: Sequence[Mapping[str, Any]],
    matrix: TargetMatrix | None,
    source: str,
    warnings: list[str],
) -> tuple[NodePool, ...]:
    """GPU nodes → pools, nodes with the same stack collapsed (``node_count``)."""
    groups: dict[tuple[Any, ...], tuple[NodePool, int, set[str]]] = {}
    for node in nodes:
        pool = _pool_for_node(node, workloads, runtime_classes, matrix, source, warnings)
        if pool is None:
            continue
        labels = (node.get("metadata") or {}).get("labels") or {}
        group = next((labels[k] for k in _NODE_GROUP_LABELS if labels.get(k)), None)
        key = _pool_key(pool)
        first, count, names = groups.get(key, (pool, 0, set()))
        names.add(group or "")
        groups[key] = (first, count + 1, names)
    named = [
        # A node without a node-group label makes the group label no name for the pool.
        dataclasses.replace(first, node_count=count, name=_pool_name(first, set() if "" in names else names))
        for first, count, names in groups.values()
    ]
    named.sort(key=lambda p: (p.name, p.driver or "", str(p.gpus)))
    # merge_targets gives repeated names a -2, -3 suffix.
    return merge_targets(Target(pools=(p,), source=source) for p in named).pools


def _list_all(conn: _Connection, step: str, request: Callable[..., Any], optional: bool = False) -> list[Mapping[str, Any]]:
    """All items of a list call, following ``continue`` tokens (large clusters)."""
    items: list[Mapping[str, Any]] = []
    token: str | None = None
    while True:
        kwargs: dict[str, Any] = {"limit": 500}
        if token:
            kwargs["_continue"] = token
        body = _call(conn, step, request, optional=optional, **kwargs)
        items.extend(body.get("items") or [])
        token = (body.get("metadata") or {}).get("continue")
        if not token:
            return items


def target_from_cluster(
    context: str | None,
    kubeconfig: str | None,
    matrix: TargetMatrix | None,
    namespace_hint: str | None = None,
    timeout: tuple[float, float] = DEFAULT_TIMEOUT,
) -> Target:
    """Read nodes, device plugin / toolkit DaemonSets, RuntimeClasses and the
    ClusterPolicy, and turn GPU nodes into pools."""
    from kubernetes import client

    conn = _connect(context, kubeconfig, timeout)
    source = f"cluster:{conn.context}"
    warnings: list[str] = []
    core, apps = client.CoreV1Api(conn.api_client), client.AppsV1Api(conn.api_client)
    try:
        nodes = _list_all(conn, "listing nodes", core.list_node)

        workloads: list[_Workload] = []
        try:
            daemonsets = _list_all(conn, "listing DaemonSets", apps.list_daemon_set_for_all_namespaces, optional=True)
        except _Forbidden as refused:
            daemonsets = []
            namespaces = [namespace_hint] if namespace_hint else []
            for namespace in namespaces:
                try:
                    daemonsets += _list_all(
                        conn, f"listing DaemonSets in {namespace}", lambda **kw: apps.list_namespaced_daemon_set(namespace, **kw), optional=True
                    )
                except _Forbidden:
                    pass
            if not daemonsets:
                warnings.append(
                    f"cannot list DaemonSets ({refused.status}): device plugin and toolkit versions come only from a "
                    "ClusterPolicy, if any (grant list on daemonsets to read them)"
                )
        workloads += workloads_from_daemonsets(daemonsets, warnings)

        try:
            policies = _list_all(
                conn,
                "listing ClusterPolicies",
                lambda **kw: client.CustomObjectsApi(conn.api_client).list_cluster_custom_object("nvidia.com", "v1", "clusterpolicies", **kw),
                optional=True,
            )
            workloads += workloads_from_clusterpolicy(policies)
        except _Forbidden as refused:
            if refused.status == 403:
                warnings.append("cannot read the GPU Operator ClusterPolicy (403 Forbidden); ignored")
            # 404: the GPU Operator is not installed; nothing to say.

        try:
            runtime_classes = _list_all(conn, "listing RuntimeClasses", client.NodeV1Api(conn.api_client).list_runtime_class, optional=True)
        except _Forbidden as refused:
            runtime_classes = []
            if refused.status == 403:
                warnings.append("cannot list RuntimeClasses (403 Forbidden); runtime classes unknown")
    finally:
        conn.api_client.close()

    pools = pools_from_nodes(nodes, workloads, runtime_classes, matrix, source, warnings)
    if not pools:
        warnings.append("no node has NVIDIA GPU labels or nvidia.com/* resources (is GPU Feature Discovery running?)")
    handlers = tuple(sorted({str(rc.get("handler")) for rc in runtime_classes if rc.get("handler")}))
    return Target(pools=pools, runtime_classes=handlers, source=source, warnings=tuple(dict.fromkeys(warnings)))


def read_configmap(
    name: str,
    namespace: str | None,
    context: str | None,
    kubeconfig: str | None,
    key: str = "matrix.toml",
    timeout: tuple[float, float] = DEFAULT_TIMEOUT,
) -> str:
    """The text under ``key`` in ConfigMap ``namespace/name`` (namespace None = the context's)."""
    from kubernetes import client

    conn = _connect(context, kubeconfig, timeout)
    namespace = namespace or conn.namespace
    step = f"reading ConfigMap {namespace}/{name}"
    try:
        try:
            body = _call(conn, step, client.CoreV1Api(conn.api_client).read_namespaced_config_map, name, namespace, optional=True)
        except _Forbidden as refused:
            reason = "404 Not Found (publish it: imagelint matrix publish | kubectl apply -f -)" if refused.status == 404 else "403 Forbidden"
            raise _cluster_error(conn, step, reason) from None
    finally:
        conn.api_client.close()
    data = body.get("data") or {}
    if key not in data:
        raise _cluster_error(conn, step, f"it has no key {key!r} (keys: {', '.join(sorted(data)) or 'none'})")
    return str(data[key])


__all__ = ["DEFAULT_TIMEOUT", "pools_from_nodes", "read_configmap", "target_from_cluster"]


DEFAULT_MATRIX_CONFIGMAP = "imagelint-matrix"


def parse_cluster_matrix_selector(selector: str) -> tuple[str | None, str]:
    """``cluster`` → (context namespace, imagelint-matrix); ``cluster:NS/NAME`` or ``cluster:NAME``."""
    _, _, rest = selector.partition(":")
    if not rest:
        return None, DEFAULT_MATRIX_CONFIGMAP
    namespace, sep, name = rest.rpartition("/")
    return (namespace or None) if sep else None, name or DEFAULT_MATRIX_CONFIGMAP


def matrix_from_cluster(
    context: str | None,
    kubeconfig: str | None,
    overlays: Sequence[str] = (),
    selector: str = "cluster",
    timeout: tuple[float, float] = DEFAULT_TIMEOUT,
):  # -> imagelint.matrix.Matrix
    """The matrix published in the cluster (``imagelint matrix publish``), with local overlays on top."""
    from pathlib import Path

    from imagelint.matrix import apply_overlay, matrix_from_text

    namespace, name = parse_cluster_matrix_selector(selector)
    text = read_configmap(name, namespace, context, kubeconfig, timeout=timeout)
    matrix = matrix_from_text(text, f"cluster:{namespace + '/' if namespace else ''}{name}")
    for overlay in overlays:
        try:
            overlay_text = Path(overlay).read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read matrix overlay: {exc.strerror or exc}", overlay) from None
        matrix = apply_overlay(matrix, overlay_text, overlay)
    return matrix
