"""Build real images with the test image builder and read them through the real source + layer reader."""

from __future__ import annotations

from pathlib import Path

from imagelint.facts.capture import CAPTURE_SPEC
from imagelint.facts.collect import collect_image_facts
from imagelint.facts.model import ImageFacts
from imagelint.layers.filesystem import ImageFilesystem
from imagelint.layers.reader import read_image_filesystem
from imagelint.sources import SourceOptions, open_images
from tests.support.imagebuilder import ImageSpec, write_docker_archive, write_oci_layout


def open_spec(tmp: Path, spec: ImageSpec, fmt: str = "oci-dir"):
    built = spec.build()
    if fmt == "oci-dir":
        ref = f"oci-dir:{write_oci_layout(tmp / 'layout', {'latest': built})}"
    elif fmt in ("docker-archive", "docker-archive-oci"):
        layout = "oci" if fmt.endswith("oci") else "classic"
        ref = f"docker-archive:{write_docker_archive(tmp / 'img.tar', built, ['example/app:1'], layout=layout)}"
    else:
        raise ValueError(fmt)
    [image] = open_images(ref, SourceOptions(use_daemon=False))
    return image


def filesystem(tmp: Path, layers: list, **kw) -> ImageFilesystem:
    image = open_spec(tmp, ImageSpec(layers=layers, **kw))
    return read_image_filesystem(image, CAPTURE_SPEC)


def facts_for(tmp: Path, spec: ImageSpec, fmt: str = "oci-dir", read_layers: bool = True) -> ImageFacts:
    image = open_spec(tmp, spec, fmt)
    fs = read_image_filesystem(image, CAPTURE_SPEC) if read_layers else None
    return collect_image_facts(image, fs)
