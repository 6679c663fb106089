"""The GPU Operator's components as deployed: device plugin and container toolkit DaemonSets, ClusterPolicy.

Read from every namespace's DaemonSets (the images name the component, the tag its
version, env / args its settings, nodeSelector / nodeAffinity where it runs) and from
the GPU Operator's ClusterPolicy (``nvidia.com/v1``), which fills versions and
settings when the DaemonSets cannot be read. Both reads are optional: 403/404 degrade
to a warning (``read_operator_components``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from imagelint.cluster.nvidia_names import nvidia_names
from imagelint.cluster.resources import CLUSTER_POLICIES, DAEMON_SETS, MALFORMED
from imagelint.cluster.source import ObjectSource
from imagelint.lazyre import lazy_pattern

_IMAGE_VERSION = lazy_pattern(r"^v?(\d+\.\d+\.\d+(?:-rc\.\d+)?)")


@dataclass(frozen=True)
class OperatorComponent:
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
    if repository in nvidia_names().device_plugin_images:
        return "device-plugin"
    if repository in nvidia_names().toolkit_images:
        return "toolkit"
    return None


def _env_map(env: Iterable[Mapping[str, Any]] | None) -> dict[str, str]:
    return {e["name"]: str(e.get("value", "")) for e in env or () if isinstance(e, Mapping) and "name" in e and "value" in e}


def workloads_from_daemonsets(items: Sequence[Mapping[str, Any]], warnings: list[str]) -> list[OperatorComponent]:
    found: list[OperatorComponent] = []
    for ds in items:
        try:
            found += _daemonset_components(ds, warnings)
        except MALFORMED as exc:
            warnings.append(f"DaemonSet {_where(ds)}: not an object imagelint understands ({exc.__class__.__name__}); ignored")
    return sorted(found, key=lambda w: w.where)


def _where(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    if not isinstance(meta, Mapping):
        return "?"
    return "/".join(str(meta.get(k)) for k in ("namespace", "name") if meta.get(k))


def _string_map(raw: Any) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in raw.items()):
        raise ValueError("not a map of strings")
    return dict(raw)


def _selector_terms(raw: Any) -> tuple[Mapping[str, Any], ...]:
    """nodeSelectorTerms, checked so that matching them later cannot fail."""
    terms = raw or []
    if not isinstance(terms, list):
        raise ValueError("nodeSelectorTerms is not a list")
    for term in terms:
        expressions = term.get("matchExpressions") or [] if isinstance(term, Mapping) else None
        if not isinstance(expressions, list) or not all(
            isinstance(e, Mapping) and isinstance(e.get("key"), str) and isinstance(e.get("values") or [], list)
            for e in expressions
        ):
            raise ValueError("a nodeSelectorTerm is malformed")
    return tuple(terms)


def _daemonset_components(ds: Mapping[str, Any], warnings: list[str]) -> list[OperatorComponent]:
    found = []
    meta = ds.get("metadata") or {}
    where = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
    pod = ((ds.get("spec") or {}).get("template") or {}).get("spec") or {}
    affinity = ((pod.get("affinity") or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or {}
    for container in pod.get("containers") or ():
        image = str(container.get("image") or "")
        kind = _image_kind(image)
        command = " ".join(str(c) for c in _list(container.get("command")) + _list(container.get("args")))
        # GFD ships in the device plugin image (v0.15+) but is not the plugin.
        if kind is None or "feature-discovery" in where or "feature-discovery" in command:
            continue
        version = _image_version(image)
        if version is None:
            warnings.append(f"{kind} DaemonSet {where}: image {image} has no version tag; version unknown")
        found.append(
            OperatorComponent(
                kind=kind,
                where=where,
                version=version,
                env=MappingProxyType(_env_map(container.get("env"))),
                args=tuple(str(a) for a in _list(container.get("args"))),
                node_selector=MappingProxyType(_string_map(pod.get("nodeSelector"))),
                node_terms=_selector_terms(affinity.get("nodeSelectorTerms")),
            )
        )
    return found


def _list(raw: Any) -> list[Any]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ValueError("not a list")
    return raw


def workloads_from_clusterpolicy(items: Sequence[Mapping[str, Any]], warnings: list[str] | None = None) -> list[OperatorComponent]:
    found: list[OperatorComponent] = []
    for policy in items:
        try:
            found += _clusterpolicy_components(policy)
        except MALFORMED as exc:
            if warnings is not None:
                warnings.append(f"ClusterPolicy {_where(policy)}: not an object imagelint understands ({exc.__class__.__name__}); ignored")
    return found


def _clusterpolicy_components(policy: Mapping[str, Any]) -> list[OperatorComponent]:
    found = []
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
            env["MIG_STRATEGY"] = str(spec["mig"]["strategy"])
        if kind == "toolkit" and cdi.get("enabled") and cdi.get("default") and "NVIDIA_CONTAINER_RUNTIME_MODE" not in env:
            # ClusterPolicy cdi.default makes the operator configure the toolkit in cdi mode.
            env["NVIDIA_CONTAINER_RUNTIME_MODE"] = "cdi"
        match = _IMAGE_VERSION.match(str(version)) if version else None
        found.append(
            OperatorComponent(
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


def read_operator_components(conn: ObjectSource, warnings: list[str], namespace_hint: str | None = None) -> list[OperatorComponent]:
    """Device plugin and toolkit DaemonSets (all namespaces; else ``namespace_hint``), then the
    ClusterPolicy's view. What cannot be read is a warning, never the end of the run."""
    components: list[OperatorComponent] = []
    listing = conn.list_objects(DAEMON_SETS, optional=True)
    daemonsets = list(listing.items)
    if not listing.checked:
        for namespace in [namespace_hint] if namespace_hint else []:
            daemonsets += conn.list_objects(DAEMON_SETS, namespace, optional=True).items
        if not daemonsets:
            warnings.append(
                f"cannot list DaemonSets ({listing.refused}): device plugin and toolkit versions come only from a "
                "ClusterPolicy, if any (grant list on daemonsets to read them)"
            )
    components += workloads_from_daemonsets(daemonsets, warnings)

    policies = conn.list_objects(CLUSTER_POLICIES, optional=True)
    if policies.checked:
        components += workloads_from_clusterpolicy(policies.items, warnings)
    elif policies.refused == 403:
        warnings.append("cannot read the GPU Operator ClusterPolicy (403 Forbidden); ignored")
    # 404: the GPU Operator is not installed; nothing to say.
    return components


__all__ = ["OperatorComponent", "read_operator_components", "workloads_from_clusterpolicy", "workloads_from_daemonsets"]
