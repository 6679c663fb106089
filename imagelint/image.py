"""The image model every source yields: platform, config, and layers as streams.

Sources (``imagelint.sources``) build these; the layer reader
(``imagelint.layers``) and the facts (``imagelint.facts``) consume them. Nothing
here does I/O except ``Layer.open()``, which calls the source's opener.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import BinaryIO

from imagelint.errors import UsageError

# Media types (OCI image spec and Docker distribution).
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
DOCKER_MANIFEST_LIST = "application/vnd.docker.distribution.manifest.list.v2+json"
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
DOCKER_CONFIG = "application/vnd.docker.container.image.v1+json"
INDEX_MEDIA_TYPES = frozenset({OCI_INDEX, DOCKER_MANIFEST_LIST})
MANIFEST_MEDIA_TYPES = frozenset({OCI_MANIFEST, DOCKER_MANIFEST})

# Layer media types -> compression.
LAYER_COMPRESSION: Mapping[str, str] = MappingProxyType(
    {
        "application/vnd.oci.image.layer.v1.tar": "none",
        "application/vnd.oci.image.layer.v1.tar+gzip": "gzip",
        "application/vnd.oci.image.layer.v1.tar+zstd": "zstd",
        "application/vnd.oci.image.layer.nondistributable.v1.tar": "none",
        "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip": "gzip",
        "application/vnd.oci.image.layer.nondistributable.v1.tar+zstd": "zstd",
        "application/vnd.docker.image.rootfs.diff.tar": "none",
        "application/vnd.docker.image.rootfs.diff.tar.gzip": "gzip",
        "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip": "gzip",
        "application/vnd.docker.image.rootfs.diff.tar.zstd": "zstd",
    }
)


@dataclass(frozen=True, order=True)
class Platform:
    """An OCI platform: ``os/architecture[/variant]``."""

    os: str
    architecture: str
    variant: str | None = None

    @classmethod
    def parse(cls, text: str) -> Platform:
        """Parse ``linux/arm64/v8``, ``linux/amd64``, a bare ``arm64`` (linux assumed) or a bare
        OS, ``linux`` (its default architecture, amd64: the default platform's)."""
        parts = [p for p in (text or "").strip().split("/")]
        if any(not p for p in parts) or not 1 <= len(parts) <= 3:
            raise UsageError(f"invalid platform {text!r}: expected os/arch[/variant], e.g. linux/amd64")
        if len(parts) == 1:
            if parts[0].lower() in _OS_NAMES:
                return cls(parts[0].lower(), DEFAULT_ARCH)
            return cls("linux", normalize_arch(parts[0]))
        variant = parts[2] if len(parts) == 3 else None
        return cls(parts[0].lower(), normalize_arch(parts[1]), variant)

    def matches(self, other: Platform) -> bool:
        """True when ``other`` (an image's platform) satisfies this requested platform.

        A request without a variant accepts any variant; arm64 with no variant
        equals arm64/v8, as containerd's platform matcher treats them.
        """
        if self.os != other.os or self.architecture != other.architecture:
            return False
        if self.variant is None:
            return True
        return _norm_variant(self.architecture, self.variant) == _norm_variant(other.architecture, other.variant)

    def __str__(self) -> str:
        return "/".join(p for p in (self.os, self.architecture, self.variant) if p)


# A bare ``--platform`` value naming one of these is an OS, not an architecture.
_OS_NAMES = frozenset({"linux", "windows", "darwin", "freebsd"})


def normalize_arch(arch: str) -> str:
    a = arch.strip().lower()
    return {"x86_64": "amd64", "x86-64": "amd64", "aarch64": "arm64", "armhf": "arm", "i386": "386"}.get(a, a)


def _norm_variant(arch: str, variant: str | None) -> str | None:
    if arch == "arm64" and variant in (None, "v8"):
        return "v8"
    return variant


DEFAULT_ARCH = "amd64"
DEFAULT_PLATFORM = Platform("linux", DEFAULT_ARCH)


@dataclass(frozen=True)
class HistoryEntry:
    """One entry of the image config's ``history``: the build step behind a layer, or one that made none."""

    created_by: str = ""
    created: str | None = None
    comment: str | None = None
    empty_layer: bool = False


@dataclass(frozen=True)
class ImageConfig:
    """What the image config says. ``env`` keeps the config's order and duplicates."""

    env: tuple[tuple[str, str], ...] = ()
    entrypoint: tuple[str, ...] | None = None
    cmd: tuple[str, ...] | None = None
    working_dir: str = ""
    user: str = ""
    labels: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    history: tuple[HistoryEntry, ...] = ()
    diff_ids: tuple[str, ...] = ()
    os: str = ""
    architecture: str = ""
    variant: str | None = None

    @property
    def env_map(self) -> Mapping[str, str]:
        """Env as the runtime sees it: the last assignment of a name wins."""
        return MappingProxyType(dict(self.env))

    @property
    def platform(self) -> Platform:
        return Platform(self.os or "linux", normalize_arch(self.architecture or "amd64"), self.variant or None)


LayerOpener = Callable[[], BinaryIO]


@dataclass(frozen=True)
class Layer:
    """One layer blob. ``open()`` returns the *compressed* stream, digest-verified at EOF.

    ``digest`` is the blob digest (what a registry addresses; for an
    uncompressed layer it equals ``diff_id``). ``diff_id`` is the digest of the
    uncompressed tar from the config's ``rootfs.diff_ids`` (may be None for
    sources that do not know it). ``compression`` is ``gzip``, ``zstd``,
    ``none`` or ``unknown`` (the reader then sniffs magic bytes).
    """

    index: int
    digest: str
    size: int | None
    media_type: str
    diff_id: str | None
    opener: LayerOpener = field(repr=False, compare=False)

    @property
    def compression(self) -> str:
        return LAYER_COMPRESSION.get(self.media_type, "unknown")

    def open(self) -> BinaryIO:
        return self.opener()


@dataclass(frozen=True)
class Image:
    """One platform-specific image, whatever it came from.

    ``source`` is the reference kind (``registry``, ``docker``,
    ``docker-archive``, ``oci-dir``, ``oci-archive``); ``ref`` is the reference
    as the user should see it; ``digest`` is the manifest digest when there is
    one (the daemon and classic docker-save archives may only have a config
    digest, given as ``config_digest``); ``index_digest`` is the digest of the
    index the image was selected from, if any.
    """

    ref: str
    source: str
    platform: Platform
    config: ImageConfig
    layers: tuple[Layer, ...]
    digest: str | None = None
    config_digest: str | None = None
    index_digest: str | None = None
    manifest_media_type: str | None = None
    annotations: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
