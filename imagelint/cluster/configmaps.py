"""ConfigMaps: one key's text (the matrix published with ``imagelint matrix publish``, for one)."""

from __future__ import annotations

from imagelint.cluster.connection import Connection, connect, status_text
from imagelint.cluster.resources import CONFIG_MAPS


def read_configmap_key(conn: Connection, name: str, namespace: str | None, key: str, missing_hint: str = "") -> str:
    """The text under ``key`` in ConfigMap ``namespace/name`` (namespace None = the context's).
    A missing ConfigMap or key, or no permission, is a ``ClusterError``: whoever asks for a
    ConfigMap needs it. ``missing_hint`` follows "404 Not Found" (how to create it)."""
    namespace = namespace or conn.namespace
    step = f"reading ConfigMap {namespace}/{name}"
    fetched = conn.get_object(CONFIG_MAPS, name, namespace, optional=True, step=step)
    if fetched.refused is not None:
        reason = status_text(fetched.refused)
        if fetched.refused == 404 and missing_hint:
            reason += f" ({missing_hint})"
        raise conn.error(step, reason)
    data = (fetched.object or {}).get("data") or {}
    if not isinstance(data, dict) or key not in data:
        keys = ", ".join(sorted(str(k) for k in data)) if isinstance(data, dict) else ""
        raise conn.error(step, f"it has no key {key!r} (keys: {keys or 'none'})")
    return str(data[key])


_PUBLISH_HINT = "publish it: imagelint matrix publish | kubectl apply -f -"


def read_configmap(
    name: str,
    namespace: str | None,
    context: str | None,
    kubeconfig: str | None,
    key: str = "matrix.toml",
    timeout: tuple[float, float] | None = None,
) -> str:
    """Connect, and read ``key`` of ConfigMap ``namespace/name`` (by default the published matrix)."""
    with connect(context, kubeconfig, timeout) as conn:
        return read_configmap_key(conn, name, namespace, key, missing_hint=_PUBLISH_HINT if key == "matrix.toml" else "")


__all__ = ["read_configmap", "read_configmap_key"]
