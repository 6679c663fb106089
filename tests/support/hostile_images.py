"""Builders for hostile layers and images, on top of ``tests/support/imagebuilder.py``.

Everything is deterministic and built in memory except the big ones, which are
*generated*: a bomb or a 2 GB file is a gzip/zstd stream made of one compressed
chunk of zeros repeated (multi-member gzip, multi-frame zstd are both valid), so
building it costs milliseconds and the inflated bytes never exist anywhere. The
diff_id of a generated layer is computed by hashing the same chunks as they are
generated, so the image is otherwise valid and only the fault under test shows.

    layer = tar_layer(hostile_members())                     # ../, /abs, links out, devices...
    bomb  = zero_file_layer("opt/zeros", 3 << 30, "gzip")    # 3 GiB of zeros, ~3 MB compressed
    built = image_of([layer, bomb], env={"CUDA_VERSION": "12.4.1"})
    refs  = publish(built, tmp_path, registry)               # {"oci-dir": ..., "docker-archive": ..., "registry": ...}
"""

from __future__ import annotations

import gzip
import hashlib
import io
import tarfile
from dataclasses import dataclass
from pathlib import Path

from tests.support.imagebuilder import (
    DOCKER_CONFIG,
    DOCKER_LAYER,
    DOCKER_MANIFEST,
    MTIME,
    OCI_CONFIG,
    OCI_LAYER,
    OCI_MANIFEST,
    BuiltImage,
    File,
    Member,
    RawMember,
    Special,
    Symlink,
    canonical_json,
    compress,
    layer_tar,
    sha256,
    write_docker_archive,
    write_oci_layout,
)

BLOCK = 512
# The host has /usr/local/cuda-13.0/lib64/libcudart.so.13 and /etc/passwd: a reader that followed a
# link out of the image would see them. These markers must never appear in any output.
HOST_PASSWD_MARKER = "root:x:0:0"


@dataclass(frozen=True)
class RawLayer:
    """A layer blob as it will be served: compressed bytes, media-type compression, and its diff_id."""

    blob: bytes
    compression: str  # "gzip" | "zstd" | "none"
    diff_id: str


def raw_info(name: str | bytes, type_: bytes = tarfile.REGTYPE, size: int = 0, linkname: str = "",
             mode: int = 0o644) -> tarfile.TarInfo:
    """A TarInfo with a verbatim name (bytes are decoded with surrogateescape so PAX writes them back raw)."""
    if isinstance(name, bytes):
        name = name.decode("utf-8", "surrogateescape")
    ti = tarfile.TarInfo(name)
    ti.type = type_
    ti.size = size
    ti.linkname = linkname
    ti.mode = mode
    ti.mtime = MTIME
    ti.uname = ti.gname = "root"
    return ti


def tar_layer(members: list[Member], compression: str = "gzip") -> RawLayer:
    tar = layer_tar(members)
    return RawLayer(compress(tar, compression), compression, sha256(tar))


def bytes_layer(tar: bytes, compression: str = "gzip") -> RawLayer:
    """A layer from hand-made (possibly broken) uncompressed bytes."""
    return RawLayer(compress(tar, compression), compression, sha256(tar))


def hostile_members() -> list[Member]:
    """One layer with every hostile tar member a reader must survive (and some it must ignore).

    The image's own files: ``usr/local/cuda-11.8/version.json`` (11.8.0) and ``etc/ld.so.conf.d/in-image.conf``.
    """
    version = b'{"cuda": {"name": "CUDA SDK", "version": "11.8.0"}}'
    return [
        File("usr/local/cuda-11.8/version.json", version),
        File("etc/ld.so.conf.d/in-image.conf", b"/opt/in-image/lib\n"),
        RawMember(raw_info("../../../../tmp/imagelint-escape-dotdot", size=5), b"owned"),
        RawMember(raw_info("/tmp/imagelint-escape-absolute", size=5), b"owned"),
        RawMember(raw_info("./usr/../../etc/imagelint-escape-mid", size=5), b"owned"),
        # absolute and climbing link targets: resolved inside the image root, never on the host
        Symlink("usr/local/cuda-12.4/version.json", "/../../../../usr/local/cuda-11.8/version.json"),
        Symlink("usr/local/cuda-12.5/version.json", "/etc/passwd"),
        Symlink("etc/ld.so.conf.d/host.conf", "../../../../../../etc/ld.so.conf"),
        Symlink("usr/local/cuda-13.0", "/usr/local/cuda-13.0"),  # the host has this directory
        Symlink("usr/lib/x86_64-linux-gnu/libcudart.so.13", "/usr/local/cuda-13.0/lib64/libcudart.so.13"),
        RawMember(raw_info("usr/lib/hardlink-out", tarfile.LNKTYPE, linkname="../../../../etc/shadow")),
        RawMember(raw_info("usr/lib/hardlink-abs", tarfile.LNKTYPE, linkname="/etc/shadow")),
        # loops
        Symlink("loop/a", "b"),
        Symlink("loop/b", "a"),
        Symlink("loop/self", "self"),
        Symlink("usr/local/cuda-loop", "cuda-loop/../cuda-loop"),
        # devices, fifos, setuid
        Special("dev/nvidia0", "chr"),
        Special("dev/sda", "blk"),
        Special("run/fifo", "fifo"),
        File("usr/local/bin/suid-root", b"#!/bin/sh\nexit 0\n", mode=0o4755),
        File("usr/local/bin/sgid", b"#!/bin/sh\nexit 0\n", mode=0o2755),
        # duplicates: the later entry wins
        File("etc/ld.so.conf.d/dup.conf", b"/first\n"),
        File("etc/ld.so.conf.d/dup.conf", b"/second\n"),
        # a name that is not UTF-8
        RawMember(raw_info(b"usr/share/bad-\xff\xfe-name.sh", size=3), b"x=1"),
    ]


def lying_size_tar(claimed: int = 10 << 20, actual: bytes = b"short") -> bytes:
    """A tar whose member header claims ``claimed`` bytes but the stream ends after ``actual``."""
    ti = raw_info("usr/local/cuda-12.4/version.json", size=claimed)
    return ti.tobuf(tarfile.GNU_FORMAT) + actual


def truncated_blob(layer: RawLayer, keep: float = 0.5) -> RawLayer:
    """The same layer cut short (its diff_id still claims the full content)."""
    return RawLayer(layer.blob[: max(1, int(len(layer.blob) * keep))], layer.compression, layer.diff_id)


def not_a_tar(compression: str = "gzip") -> RawLayer:
    return bytes_layer(b"This is a README, not a tar archive.\n" * 40, compression)


# --- generated big layers --------------------------------------------------------------------------

_CHUNK = 16 << 20  # zeros compressed once, repeated


def _zero_file_tar_parts(path: str, size: int) -> tuple[bytes, bytes]:
    header = raw_info(path, size=size).tobuf(tarfile.PAX_FORMAT)
    trailer = bytes((-size) % BLOCK) + bytes(2 * BLOCK)
    return header, trailer


def _gzip_member(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=9, mtime=0)


def _zstd_frame(data: bytes) -> bytes:
    import zstandard

    return zstandard.ZstdCompressor(level=19).compress(data)


def zero_file_layer(path: str, size: int, compression: str = "gzip", prefix: list[Member] | None = None,
                    hash_diff_id: bool = True) -> RawLayer:
    """A layer holding ``prefix`` members then one ``size``-byte file of zeros, never materialised.

    The blob is a concatenation of independently compressed pieces; the diff_id is
    sha256 over the uncompressed pieces, fed chunk by chunk (``hash_diff_id=False``
    skips that ~1 s/GB for bombs that must fail long before any diff_id matters).
    """
    piece = {"gzip": _gzip_member, "zstd": _zstd_frame}[compression]
    head_tar = layer_tar(prefix or [])[: -2 * BLOCK] if prefix else b""
    # tarfile pads the archive to 10240 bytes: strip trailing zero blocks back to the last member
    head_tar = head_tar.rstrip(b"\x00")
    if head_tar:
        head_tar += bytes((-len(head_tar)) % BLOCK)
    header, trailer = _zero_file_tar_parts(path, size)
    digest = hashlib.sha256()
    out = io.BytesIO()
    first = head_tar + header
    digest.update(first)
    out.write(piece(first))
    full, rest = divmod(size, _CHUNK)
    if full:
        zeros = bytes(_CHUNK)
        chunk_blob = piece(zeros)
        for _ in range(full):
            if hash_diff_id:
                digest.update(zeros)
            out.write(chunk_blob)
        del zeros
    tail = bytes(rest) + trailer
    digest.update(tail)
    out.write(piece(tail))
    return RawLayer(out.getvalue(), compression, "sha256:" + digest.hexdigest())


def many_files_layer(count: int, compression: str = "zstd") -> RawLayer:
    """A layer of ``count`` empty files, generated header by header (names of fixed width).

    Headers differ only in the decimal digits of the name, so each header is a template
    with its checksum adjusted by the digits' byte sum: no tarfile call per member.
    """
    width = len(str(count))
    template = bytearray(raw_info("f/" + "0" * width, size=0).tobuf(tarfile.USTAR_FORMAT))
    assert len(template) == BLOCK
    template[148:156] = b"        "
    base_sum = sum(template) - (ord("0") * width)
    name_at = 2
    import zstandard

    digest = hashlib.sha256()
    raw = io.BytesIO()
    if compression == "zstd":
        writer = zstandard.ZstdCompressor(level=1).stream_writer(raw, closefd=False)
    else:
        writer = gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=1, mtime=0)
    batch = bytearray()
    for i in range(count):
        digits = str(i).zfill(width).encode()
        block = bytearray(template)
        block[name_at:name_at + width] = digits
        block[148:156] = b"%06o\x00 " % (base_sum + sum(digits))
        batch += block
        if len(batch) >= (4 << 20):
            digest.update(batch)
            writer.write(bytes(batch))
            batch.clear()
    batch += bytes(2 * BLOCK)
    digest.update(batch)
    writer.write(bytes(batch))
    writer.close() if compression == "gzip" else writer.flush(zstandard.FLUSH_FRAME)
    return RawLayer(raw.getvalue(), compression, "sha256:" + digest.hexdigest())


# --- images ----------------------------------------------------------------------------------------


def image_of(layers: list[RawLayer], env: dict[str, str] | None = None, docker: bool = False,
             config_patch: dict | None = None, diff_ids: list[str] | None = None,
             architecture: str = "amd64", labels: dict[str, str] | None = None) -> BuiltImage:
    """A single-platform image around prepared layers (OCI, or Docker schema2 with ``docker``)."""
    layer_types = DOCKER_LAYER if docker else OCI_LAYER
    entries = [(sha256(l.blob), l.blob, layer_types[l.compression], l.diff_id) for l in layers]
    cfg: dict = {"Env": [f"{k}={v}" for k, v in (env or {}).items()]}
    if labels:
        cfg["Labels"] = labels
    config = {
        "architecture": architecture,
        "os": "linux",
        "config": cfg,
        "rootfs": {"type": "layers", "diff_ids": diff_ids if diff_ids is not None else [e[3] for e in entries]},
        "history": [{"created": "2024-01-01T00:00:00Z", "created_by": "COPY . /"} for _ in entries],
        "created": "2024-01-01T00:00:00Z",
    }
    config.update(config_patch or {})
    config_bytes = canonical_json(config)
    mt = DOCKER_MANIFEST if docker else OCI_MANIFEST
    manifest = {
        "schemaVersion": 2,
        "mediaType": mt,
        "config": {"mediaType": DOCKER_CONFIG if docker else OCI_CONFIG, "digest": sha256(config_bytes),
                   "size": len(config_bytes)},
        "layers": [{"mediaType": m, "digest": d, "size": len(b)} for d, b, m, _ in entries],
    }
    return BuiltImage(canonical_json(manifest), mt, config_bytes, entries, "linux", architecture, None)


def publish(built: BuiltImage, workdir: Path, registry=None, repo: str | None = None,
            tag: str = "t") -> dict[str, str]:
    """Write the image as an OCI layout and a Docker 25+ docker-save archive (compressed blobs kept),
    and push it to ``registry`` when given. Returns CLI references by transport."""
    workdir.mkdir(parents=True, exist_ok=True)
    layout = write_oci_layout(workdir / "layout", {tag: built})
    archive = write_docker_archive(workdir / "image.tar", built, [f"hostile/img:{tag}"], layout="oci")
    refs = {"oci-dir": f"oci-dir:{layout}:{tag}", "docker-archive": f"docker-archive:{archive}"}
    if registry is not None:
        import uuid

        repo = repo or f"hostile/{uuid.uuid4().hex[:10]}"
        registry.push(repo, tag, built)
        refs["registry"] = f"registry:{registry.host}/{repo}:{tag}"
    return refs
