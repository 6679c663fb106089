"""What an image says about the image it was built FROM.

Stated explicitly by the OCI annotations ``org.opencontainers.image.base.name``
/ ``.digest`` (on the manifest, or copied into config labels by some builders),
or recognisable from the env every official CUDA image sets (``NVARCH``,
``NV_CUDA_CUDART_VERSION``...) and its maintainer label. Names and keys are in
``imagelint.facts.names``.
"""

from __future__ import annotations

from collections.abc import Mapping

from imagelint.facts import names
from imagelint.facts.model import BaseImageFacts, EnvSetting, Provenance
from imagelint.image import HistoryEntry


def base_image_facts(
    annotations: Mapping[str, str],
    labels: Mapping[str, str],
    env: tuple[EnvSetting, ...],
    history: tuple[HistoryEntry, ...] = (),
) -> BaseImageFacts:
    provenance: list[Provenance] = []

    def stated(keys: tuple[str, ...]) -> str | None:
        for key in keys:
            for kind, source in (("annotation", annotations), ("label", labels)):
                value = (source.get(key) or "").strip()
                if value:
                    provenance.append(Provenance(kind=kind, key=key))
                    return value
        return None

    name = stated(names.BASE_NAME_KEYS)
    digest = stated(names.BASE_DIGEST_KEYS)
    env_names = {e.name: e for e in env}
    for key in names.OFFICIAL_CUDA_ENV:
        if key in env_names:
            provenance.append(env_names[key].provenance)
    label, value = names.OFFICIAL_CUDA_MAINTAINER_LABEL
    if labels.get(label) == value:
        provenance.append(Provenance(kind="label", key=label))
    return BaseImageFacts(name=name, digest=digest, layer_count=_base_layer_count(labels, history), provenance=tuple(provenance))


def looks_like_official_cuda(base: BaseImageFacts) -> bool:
    """True when the env/labels of the official nvidia/cuda images are present."""
    return any(p.kind == "env" and p.key in names.OFFICIAL_CUDA_ENV for p in base.provenance)


def _base_layer_count(labels: Mapping[str, str], history: tuple[HistoryEntry, ...]) -> int | None:
    # A config's history does not mark where FROM ended; nothing in it can be trusted to
    # tell base steps from the image's own, so the count stays unknown unless a future
    # source (the base image's own manifest) supplies it.
    return None
