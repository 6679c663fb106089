"""Build real layers (tests/support/imagebuilder.py) and open them as imagelint Layers over BytesIO."""

from __future__ import annotations

import hashlib
import io
import tarfile
from typing import Sequence

from imagelint.errors import DigestMismatchError
from imagelint.image import Image, ImageConfig, Layer, Platform
from imagelint.layers.model import CaptureRule, CaptureSpec
from tests.support.imagebuilder import OCI_LAYER, ImageSpec, Member, compress, layer_tar, sha256

UNKNOWN_MEDIA_TYPE = "application/x-unknown-layer"


def blob_layer(index: int, blob: bytes, compression: str = "gzip", media_type: str | None = None) -> Layer:
    """A Layer whose opener serves ``blob`` (compressed as ``compression``; 'unknown' = sniff)."""
    mt = media_type or (UNKNOWN_MEDIA_TYPE if compression == "unknown" else OCI_LAYER[compression])
    return Layer(index, sha256(blob), len(blob), mt, None, lambda: io.BytesIO(blob))


def make_layer(index: int, members: Sequence[Member], compression: str = "gzip") -> Layer:
    tar = layer_tar(members)
    blob = compress(tar, "gzip" if compression == "unknown" else compression)
    return blob_layer(index, blob, compression)


def image_of(layers: Sequence[Layer]) -> Image:
    return Image("test", "test", Platform("linux", "amd64"), ImageConfig(), tuple(layers))


def built_image(layer_members: Sequence[Sequence[Member]], compression: str = "gzip") -> Image:
    """An Image from ImageSpec(...).build(): layers opened over the built blobs."""
    built = ImageSpec(layers=list(layer_members), compression=compression).build()
    layers = tuple(
        Layer(i, digest, len(blob), mt, diff_id, lambda b=blob: io.BytesIO(b))
        for i, (digest, blob, mt, diff_id) in enumerate(built.layers)
    )
    return image_of(layers)


def spec_of(*rules: tuple, scanners: dict | None = None) -> CaptureSpec:
    return CaptureSpec(tuple(CaptureRule(*r) for r in rules), scanner_factory=scanners or {})


def gnu_tar(entries: Sequence[tuple[tarfile.TarInfo, bytes]]) -> bytes:
    """A tar in GNU format (long names become ././@LongLink 'L' members)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tf:
        for info, data in entries:
            tf.addfile(info, io.BytesIO(data) if data else None)
    return buf.getvalue()


def file_info(name: str, size: int = 0, type_: bytes = tarfile.REGTYPE, linkname: str = "") -> tarfile.TarInfo:
    ti = tarfile.TarInfo(name)
    ti.type = type_
    ti.size = size
    ti.mode = 0o644
    ti.mtime = 1_700_000_000
    ti.linkname = linkname
    return ti


class VerifyingStream(io.RawIOBase):
    """Like a real source's stream: raises DigestMismatchError at EOF if the bytes don't hash right."""

    def __init__(self, blob: bytes, digest: str) -> None:
        super().__init__()
        self._inner = io.BytesIO(blob)
        self._hash = hashlib.sha256()
        self._digest = digest
        self.reached_eof = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def,override]
        n = self._inner.readinto(buffer)
        if n:
            self._hash.update(memoryview(buffer)[:n])
            return n
        self.reached_eof = True
        if "sha256:" + self._hash.hexdigest() != self._digest:
            raise DigestMismatchError(f"blob {self._digest[:19]}: digest mismatch")
        return 0
