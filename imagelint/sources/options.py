"""``SourceOptions``: how to reach images (platform, TLS, credentials' home, timeouts, cache, limits).

Its own module so that each source (``registry``, ``daemon``, ``archive``, ``layout``)
can import it without importing the dispatching package ``imagelint.sources``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from imagelint.image import DEFAULT_PLATFORM, Platform
from imagelint.layers.limits import ReadLimits


@dataclass(frozen=True)
class SourceOptions:
    """How to reach images. Built by the CLI from flags and config; never mutated.

    ``platform`` selects the entry of an index (default linux/amd64);
    ``all_platforms`` selects every entry. ``ca_cert`` is a PEM bundle that
    replaces the system trust for registries; ``insecure_registries`` lists
    ``host[:port]`` names that may use plain HTTP or unverified TLS.
    ``docker_config`` is the directory holding config.json (default:
    ``$DOCKER_CONFIG`` or ``~/.docker``); ``docker_host`` overrides
    ``DOCKER_HOST`` for the daemon. ``timeout`` is per request (connect and
    read), ``retries`` bounds retries of 429/5xx/connection resets.
    """

    platform: Platform = DEFAULT_PLATFORM
    platform_explicit: bool = False
    all_platforms: bool = False
    ca_cert: str | None = None
    insecure_registries: tuple[str, ...] = ()
    docker_config: str | None = None
    docker_host: str | None = None
    timeout: float = 30.0
    retries: int = 4
    backoff: float = 0.5
    use_daemon: bool = True
    # How layers are read once reached: the layer cache (None = $IMAGELINT_CACHE_DIR, else the
    # user cache dir), and the safety limits (None = imagelint.layers.limits.DEFAULT_LIMITS).
    cache_dir: str | None = None
    no_cache: bool = False
    limits: ReadLimits | None = None
    # Registry name → ``registry_auth.Credentials`` held in memory only (``audit --use-pull-secrets``:
    # the cluster's image pull secrets, never written anywhere). They win over the Docker config for
    # their own registry and are sent to no other. Not part of equality or repr.
    registry_credentials: Mapping[str, Any] = field(
        default_factory=lambda: MappingProxyType({}), repr=False, compare=False, hash=False
    )


__all__ = ["SourceOptions"]
