"""Helpers for the layout/archive/daemon source tests: read layers back, damage archives."""

from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path

import zstandard

from imagelint.image import Image, Layer
from tests.support.imagebuilder import MTIME, BuiltImage, File, ImageSpec, LayerSpec


def read_layer(layer: Layer) -> bytes:
    with layer.open() as fh:
        return fh.read()


def uncompressed(blob: bytes) -> bytes:
    """The layer tar inside a blob, by magic bytes (independent of imagelint's own reader)."""
    if blob[:2] == b"\x1f\x8b":
        return gzip.decompress(blob)
    if blob[:4] == b"\x28\xb5\x2f\xfd":
        return zstandard.ZstdDecompressor().stream_reader(io.BytesIO(blob)).read()
    return blob


def member_names(tar_bytes: bytes) -> list[str]:
    with tarfile.open(fileobj=io.BytesIO(tar_bytes)) as tf:
        return tf.getnames()


def built_tars(built: BuiltImage) -> list[bytes]:
    return [uncompressed(blob) for _, blob, _, _ in built.layers]


def image_tars(image: Image) -> list[bytes]:
    return [uncompressed(read_layer(layer)) for layer in image.layers]


def sample_image(compressions: tuple[str, ...] = ("gzip", "zstd", "none"), docker: bool = False, **kw) -> BuiltImage:
    """An image with one layer per compression, each with a distinct file."""
    layers = [
        LayerSpec([File(f"etc/layer{i}.txt", f"layer {i} {c}\n".encode() * (i + 1))], compression=c)
        for i, c in enumerate(compressions)
    ]
    return ImageSpec(layers=layers, env={"CUDA_VERSION": "12.4.1"}, docker_media_types=docker, **kw).build()


def flip_byte_in_file(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0xFF
    path.write_bytes(bytes(data))


def flip_byte_in_member(archive: Path, name: str, within: int = 0) -> None:
    """Corrupt one byte of a member's data in place (sizes and headers stay valid)."""
    with tarfile.open(archive) as tf:
        info = tf.getmember(name)
        offset = info.offset_data + min(within, info.size - 1)
    flip_byte_in_file(archive, offset)


def rewrite_tar(src: Path, dest: Path, replace: dict[str, bytes | None] | None = None,
                extra: list[tarfile.TarInfo | tuple[tarfile.TarInfo, bytes]] | None = None) -> Path:
    """Copy a tar, replacing (bytes) or dropping (None) members by name, then appending ``extra``."""
    replace = replace or {}
    with tarfile.open(src) as tin, tarfile.open(dest, "w", format=tarfile.PAX_FORMAT) as tout:
        for info in tin:
            if info.name in replace:
                data = replace[info.name]
                if data is None:
                    continue
                info.size = len(data)
                tout.addfile(info, io.BytesIO(data))
            else:
                tout.addfile(info, tin.extractfile(info) if info.isreg() else None)
        for item in extra or []:
            info, data = item if isinstance(item, tuple) else (item, b"")
            info.size = len(data) if info.isreg() else 0
            tout.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return dest


def tar_info(name: str, type_: bytes = tarfile.REGTYPE, linkname: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = type_
    info.linkname = linkname
    info.mtime = MTIME
    return info
