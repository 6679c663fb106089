"""Ways to reach an image. Every source yields the same ``imagelint.image.Image``.

``open_images(reference, options)`` is the only entry point the rest of
imagelint uses; it dispatches on the reference kind (``imagelint.reference``).
It returns a list because an index read with ``all_platforms`` yields one image
per platform; otherwise the list has exactly one image.
"""

from __future__ import annotations

from collections.abc import Callable

from imagelint.errors import DaemonError, SourceError
from imagelint.image import Image
from imagelint.reference import ImageReference, parse_reference
from imagelint.sources.options import SourceOptions

Opener = Callable[[ImageReference, SourceOptions], list[Image]]


def _opener(kind: str) -> Opener:
    # Imported lazily, one source at a time: each pulls in its own heavy dependencies
    # (requests for registries, the docker package for the daemon).
    if kind == "registry":
        from imagelint.sources.registry import open_registry

        return open_registry
    if kind == "docker":
        from imagelint.sources.daemon import open_daemon

        return open_daemon
    if kind == "docker-archive":
        from imagelint.sources.archive import open_docker_archive

        return open_docker_archive
    if kind == "oci-dir":
        from imagelint.sources.layout import open_oci_dir

        return open_oci_dir
    if kind == "oci-archive":
        from imagelint.sources.layout import open_oci_archive

        return open_oci_archive
    raise ValueError(f"unknown reference kind {kind!r}")


def open_images(reference: str | ImageReference, options: SourceOptions | None = None) -> list[Image]:
    """Open the image(s) a reference names. Raises SourceError (exit 3) or UsageError (exit 2)."""
    options = options or SourceOptions()
    ref = parse_reference(reference) if isinstance(reference, str) else reference
    return _check_platform(_open(ref, options), options, str(ref))


def _check_platform(images: list[Image], options: SourceOptions, where: str) -> list[Image]:
    """An explicit --platform that a single-platform image does not match is an error (as syft does)."""
    if options.platform_explicit and not options.all_platforms:
        for image in images:
            if not options.platform.matches(image.platform):
                raise SourceError(f"{where}: image is {image.platform}, not the requested platform {options.platform}")
    return images


def _open(ref: ImageReference, options: SourceOptions) -> list[Image]:
    if ref.kind != "auto":
        return _opener(ref.kind)(ref, options)
    # A bare name: the daemon first when it is reachable and has the image (as trivy does),
    # then the registry. A daemon that is absent or lacks the image is not an error here.
    if options.use_daemon:
        from imagelint.sources import daemon

        found = daemon.try_open_daemon(ref, options)
        if found is not None:
            return found
    return _opener("registry")(ImageReference("registry", ref.value, None, ref.text), options)


__all__ = ["SourceOptions", "open_images", "SourceError", "DaemonError"]
