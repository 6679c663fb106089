"""Every key of one ConfigMap (an app's config mounted into a pod), bounded; 403/404 → refused."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from imagelint.cluster.objects import mapping
from imagelint.cluster.resources import CONFIG_MAPS
from imagelint.cluster.source import ObjectSource

MAX_VALUE = 256 * 1024  # a longer value is not an app config a human wrote: skipped


@dataclass(frozen=True)
class ConfigMapData:
    """One ConfigMap's keys (values over 256 KiB skipped), or the status it was refused with (403/404)."""

    namespace: str
    name: str
    data: Mapping[str, str] = field(default_factory=dict)
    refused: int | None = None

    @property
    def checked(self) -> bool:
        return self.refused is None


def read_configmap_data(conn: ObjectSource, namespace: str, name: str) -> ConfigMapData:
    fetched = conn.get_object(CONFIG_MAPS, name, namespace, optional=True)
    if not fetched.checked:
        return ConfigMapData(namespace, name, refused=fetched.refused)
    data = {
        k: v for k, v in mapping(fetched.object, "data").items()
        if isinstance(k, str) and isinstance(v, str) and len(v) <= MAX_VALUE
    }
    return ConfigMapData(namespace, name, data=data)


__all__ = ["ConfigMapData", "read_configmap_data"]
