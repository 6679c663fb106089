"""The tests' own image builder: layers, configs, manifests, indexes, and every on-disk format.

Deterministic (fixed mtimes, sorted JSON) so digests are stable. Nothing here
reads host files unless a test passes their bytes in explicitly.

    img = ImageSpec(layers=[[File("usr/local/cuda-12.4/version.json", b"..."),
                             Symlink("usr/local/cuda", "cuda-12.4")]],
                    env={"CUDA_VERSION": "12.4.1"}).build()
    write_oci_layout(tmp / "layout", {"v1": img})
    write_docker_archive(tmp / "img.tar", img, ["example/cuda:12.4"])
    push_image("http://127.0.0.1:5000", "example/cuda", "12.4", img)
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import tarfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
OCI_LAYER = {
    "none": "application/vnd.oci.image.layer.v1.tar",
    "gzip": "application/vnd.oci.image.layer.v1.tar+gzip",
    "zstd": "application/vnd.oci.image.layer.v1.tar+zstd",
}
DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json"
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
DOCKER_CONFIG = "application/vnd.docker.container.image.v1+json"
DOCKER_LAYER = {
    "none": "application/vnd.docker.image.rootfs.diff.tar",
    "gzip": "application/vnd.docker.image.rootfs.diff.tar.gzip",
    "zstd": "application/vnd.docker.image.rootfs.diff.tar.zstd",
}
MTIME = 1_700_000_000


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def canonical_json(obj: object) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


# --- layer members -----------------------------------------------------------------


@dataclass(frozen=True)
class File:
    path: str
    data: bytes = b""
    mode: int = 0o644
    uid: int = 0
    gid: int = 0


@dataclass(frozen=True)
class Dir:
    path: str
    mode: int = 0o755


@dataclass(frozen=True)
class Symlink:
    path: str
    target: str


@dataclass(frozen=True)
class Hardlink:
    path: str
    target: str  # path of an earlier member, as tar stores it


@dataclass(frozen=True)
class Whiteout:
    """Removes ``path`` (and below) from lower layers: writes ``dir/.wh.name``."""

    path: str


@dataclass(frozen=True)
class Opaque:
    """Hides everything lower layers put below directory ``path``: writes ``path/.wh..wh..opq``."""

    path: str


@dataclass(frozen=True)
class Special:
    """A device node or fifo: kind is 'chr', 'blk' or 'fifo'."""

    path: str
    kind: str = "fifo"


@dataclass(frozen=True)
class RawMember:
    """A TarInfo built by the test itself (hostile names, lying sizes...), with its data."""

    info: tarfile.TarInfo
    data: bytes = b""


Member = File | Dir | Symlink | Hardlink | Whiteout | Opaque | Special | RawMember


def _info(name: str, type_: bytes, mode: int = 0o644, size: int = 0) -> tarfile.TarInfo:
    ti = tarfile.TarInfo(name)
    ti.type = type_
    ti.mode = mode
    ti.size = size
    ti.mtime = MTIME
    ti.uname = ti.gname = "root"
    return ti


def layer_tar(members: Iterable[Member], prefix: str = "") -> bytes:
    """An uncompressed layer tar (PAX format, so long names and odd bytes survive)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for m in members:
            if isinstance(m, RawMember):
                tf.addfile(m.info, io.BytesIO(m.data) if m.data else None)
                continue
            name = prefix + m.path.lstrip("/")
            if isinstance(m, File):
                ti = _info(name, tarfile.REGTYPE, m.mode, len(m.data))
                ti.uid, ti.gid = m.uid, m.gid
                tf.addfile(ti, io.BytesIO(m.data))
            elif isinstance(m, Dir):
                tf.addfile(_info(name.rstrip("/") + "/", tarfile.DIRTYPE, m.mode))
            elif isinstance(m, Symlink):
                ti = _info(name, tarfile.SYMTYPE, 0o777)
                ti.linkname = m.target
                tf.addfile(ti)
            elif isinstance(m, Hardlink):
                ti = _info(name, tarfile.LNKTYPE)
                ti.linkname = prefix + m.target.lstrip("/")
                tf.addfile(ti)
            elif isinstance(m, Whiteout):
                d, _, base = name.rpartition("/")
                tf.addfile(_info(f"{d}/.wh.{base}" if d else f".wh.{base}", tarfile.REGTYPE))
            elif isinstance(m, Opaque):
                tf.addfile(_info(name.rstrip("/") + "/.wh..wh..opq", tarfile.REGTYPE))
            elif isinstance(m, Special):
                t = {"chr": tarfile.CHRTYPE, "blk": tarfile.BLKTYPE, "fifo": tarfile.FIFOTYPE}[m.kind]
                tf.addfile(_info(name, t, 0o600))
            else:  # pragma: no cover
                raise TypeError(m)
    return buf.getvalue()


def compress(tar: bytes, compression: str) -> bytes:
    if compression == "none":
        return tar
    if compression == "gzip":
        return gzip.compress(tar, compresslevel=6, mtime=0)
    if compression == "zstd":
        import zstandard

        return zstandard.ZstdCompressor(level=3).compress(tar)
    raise ValueError(compression)


# --- images ------------------------------------------------------------------------------


@dataclass
class LayerSpec:
    members: Sequence[Member]
    compression: str = "gzip"
    created_by: str = "COPY . /"
    raw: bytes | None = None  # use these bytes as the (compressed) blob verbatim


@dataclass
class BuiltImage:
    """A built single-platform image: its documents and blobs (digest -> bytes)."""

    manifest: bytes
    manifest_media_type: str
    config: bytes
    layers: list[tuple[str, bytes, str, str]]  # (digest, blob, media_type, diff_id)
    os: str
    architecture: str
    variant: str | None

    @property
    def digest(self) -> str:
        return sha256(self.manifest)

    @property
    def config_digest(self) -> str:
        return sha256(self.config)

    @property
    def blobs(self) -> dict[str, bytes]:
        out = {sha256(self.config): self.config}
        for digest, blob, _, _ in self.layers:
            out[digest] = blob
        return out

    @property
    def diff_ids(self) -> list[str]:
        return [d for _, _, _, d in self.layers]

    def platform_dict(self) -> dict:
        p = {"os": self.os, "architecture": self.architecture}
        if self.variant:
            p["variant"] = self.variant
        return p


@dataclass
class ImageSpec:
    layers: Sequence[LayerSpec | Sequence[Member]] = ()
    env: dict[str, str] | Sequence[tuple[str, str]] = field(default_factory=dict)
    entrypoint: list[str] | None = None
    cmd: list[str] | None = None
    working_dir: str = ""
    user: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    os: str = "linux"
    architecture: str = "amd64"
    variant: str | None = None
    docker_media_types: bool = False  # Docker schema2 instead of OCI
    compression: str = "gzip"  # default for layers given as plain member lists
    annotations: dict[str, str] = field(default_factory=dict)
    extra_config: dict = field(default_factory=dict)

    def build(self) -> BuiltImage:
        layer_types = DOCKER_LAYER if self.docker_media_types else OCI_LAYER
        layers = []
        history = []
        for spec in self.layers:
            if not isinstance(spec, LayerSpec):
                spec = LayerSpec(list(spec), self.compression)
            tar = layer_tar(spec.members)
            blob = spec.raw if spec.raw is not None else compress(tar, spec.compression)
            layers.append((sha256(blob), blob, layer_types[spec.compression], sha256(tar)))
            history.append({"created": "2024-01-01T00:00:00Z", "created_by": spec.created_by})
        env = list(self.env.items()) if isinstance(self.env, dict) else list(self.env)
        cfg: dict = {"Env": [f"{k}={v}" for k, v in env]}
        if self.entrypoint is not None:
            cfg["Entrypoint"] = self.entrypoint
        if self.cmd is not None:
            cfg["Cmd"] = self.cmd
        if self.working_dir:
            cfg["WorkingDir"] = self.working_dir
        if self.user:
            cfg["User"] = self.user
        if self.labels:
            cfg["Labels"] = self.labels
        config = {
            "architecture": self.architecture,
            "os": self.os,
            "config": cfg,
            "rootfs": {"type": "layers", "diff_ids": [l[3] for l in layers]},
            "history": history,
            "created": "2024-01-01T00:00:00Z",
        }
        if self.variant:
            config["variant"] = self.variant
        config.update(self.extra_config)
        config_bytes = canonical_json(config)
        mt = DOCKER_MANIFEST if self.docker_media_types else OCI_MANIFEST
        manifest = {
            "schemaVersion": 2,
            "mediaType": mt,
            "config": {
                "mediaType": DOCKER_CONFIG if self.docker_media_types else OCI_CONFIG,
                "digest": sha256(config_bytes),
                "size": len(config_bytes),
            },
            "layers": [{"mediaType": m, "digest": d, "size": len(b)} for d, b, m, _ in layers],
        }
        if self.annotations:
            manifest["annotations"] = self.annotations
        return BuiltImage(
            canonical_json(manifest), mt, config_bytes, layers, self.os, self.architecture, self.variant
        )


@dataclass
class BuiltIndex:
    index: bytes
    media_type: str
    images: list[BuiltImage]

    @property
    def digest(self) -> str:
        return sha256(self.index)

    @property
    def blobs(self) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        for img in self.images:
            out.update(img.blobs)
            out[img.digest] = img.manifest
        return out


def build_index(images: Sequence[BuiltImage], docker: bool = False, annotations: dict | None = None) -> BuiltIndex:
    mt = DOCKER_LIST if docker else OCI_INDEX
    doc: dict = {
        "schemaVersion": 2,
        "mediaType": mt,
        "manifests": [
            {"mediaType": i.manifest_media_type, "digest": i.digest, "size": len(i.manifest), "platform": i.platform_dict()}
            for i in images
        ],
    }
    if annotations:
        doc["annotations"] = annotations
    return BuiltIndex(canonical_json(doc), mt, list(images))


# --- on-disk formats --------------------------------------------------------------------


def _write_blob(root: Path, digest: str, data: bytes) -> None:
    algo, hexd = digest.split(":", 1)
    p = root / "blobs" / algo / hexd
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data)


def write_oci_layout(root: str | os.PathLike, tagged: dict[str, BuiltImage | BuiltIndex]) -> Path:
    """An OCI image layout directory; each tag becomes an index.json entry with ref.name."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    (root / "oci-layout").write_text('{"imageLayoutVersion":"1.0.0"}')
    entries = []
    for tag, item in tagged.items():
        for digest, data in item.blobs.items():
            _write_blob(root, digest, data)
        if isinstance(item, BuiltIndex):
            _write_blob(root, item.digest, item.index)
            entries.append({"mediaType": item.media_type, "digest": item.digest, "size": len(item.index),
                            "annotations": {"org.opencontainers.image.ref.name": tag}})
        else:
            _write_blob(root, item.digest, item.manifest)
            entries.append({"mediaType": item.manifest_media_type, "digest": item.digest, "size": len(item.manifest),
                            "annotations": {"org.opencontainers.image.ref.name": tag},
                            "platform": item.platform_dict()})
    (root / "index.json").write_bytes(canonical_json({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": entries}))
    return root


def _tar_dir(src: Path, dest: Path) -> None:
    with tarfile.open(dest, "w", format=tarfile.PAX_FORMAT) as tf:
        for p in sorted(src.rglob("*")):
            ti = tf.gettarinfo(str(p), arcname=str(p.relative_to(src)))
            ti.mtime = MTIME
            ti.uid = ti.gid = 0
            ti.uname = ti.gname = ""
            if p.is_file():
                with open(p, "rb") as fh:
                    tf.addfile(ti, fh)
            else:
                tf.addfile(ti)


def write_oci_archive(path: str | os.PathLike, tagged: dict[str, BuiltImage | BuiltIndex], workdir: str | os.PathLike) -> Path:
    layout = write_oci_layout(Path(workdir) / "oci-archive-src", tagged)
    _tar_dir(layout, Path(path))
    return Path(path)


def write_docker_archive(path: str | os.PathLike, image: BuiltImage, repo_tags: Sequence[str], layout: str = "classic") -> Path:
    """A `docker save` tarball.

    ``classic``: <config-hex>.json, <n>/layer.tar (uncompressed), manifest.json, repositories.
    ``oci``: Docker 25+ — an OCI layout (blobs/sha256/..., index.json, oci-layout) plus a
    manifest.json whose Config/Layers point at blobs/sha256/<hex>.
    """
    path = Path(path)
    buf: dict[str, bytes] = {}
    if layout == "classic":
        cfg_name = sha256(image.config).split(":")[1] + ".json"
        buf[cfg_name] = image.config
        layer_names = []
        for i, (_, blob, mt, diff_id) in enumerate(image.layers):
            tar = _decompress(blob, mt)
            name = f"{diff_id.split(':')[1]}/layer.tar"
            buf[name] = tar
            buf[f"{diff_id.split(':')[1]}/VERSION"] = b"1.0"
            layer_names.append(name)
        buf["manifest.json"] = json.dumps([{"Config": cfg_name, "RepoTags": list(repo_tags), "Layers": layer_names}]).encode()
        repos: dict = {}
        for t in repo_tags:
            r, _, tag = t.rpartition(":")
            repos.setdefault(r, {})[tag] = layer_names[-1].split("/")[0] if layer_names else ""
        buf["repositories"] = json.dumps(repos).encode()
    elif layout == "oci":
        for digest, data in image.blobs.items():
            buf["blobs/sha256/" + digest.split(":")[1]] = data
        buf["blobs/sha256/" + image.digest.split(":")[1]] = image.manifest
        buf["oci-layout"] = b'{"imageLayoutVersion":"1.0.0"}'
        buf["index.json"] = canonical_json({
            "schemaVersion": 2, "mediaType": OCI_INDEX,
            "manifests": [{"mediaType": image.manifest_media_type, "digest": image.digest, "size": len(image.manifest),
                           "annotations": {"io.containerd.image.name": repo_tags[0] if repo_tags else "",
                                           "org.opencontainers.image.ref.name": (repo_tags[0].rpartition(":")[2] if repo_tags else "")}}],
        })
        buf["manifest.json"] = json.dumps([{
            "Config": "blobs/sha256/" + image.config_digest.split(":")[1],
            "RepoTags": list(repo_tags),
            "Layers": ["blobs/sha256/" + d.split(":")[1] for d, _, _, _ in image.layers],
        }]).encode()
    else:
        raise ValueError(layout)
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tf:
        for name, data in buf.items():
            ti = _info(name, tarfile.REGTYPE, 0o644, len(data))
            tf.addfile(ti, io.BytesIO(data))
    return path


def _decompress(blob: bytes, media_type: str) -> bytes:
    if media_type.endswith("gzip"):
        return gzip.decompress(blob)
    if media_type.endswith("zstd"):
        import zstandard

        return zstandard.ZstdDecompressor().decompress(blob, max_output_size=1 << 34)
    return blob


# --- registry push -------------------------------------------------------------------


def push_image(
    base_url: str,
    repository: str,
    tag: str,
    item: BuiltImage | BuiltIndex,
    session=None,
    headers: Callable[[str], dict] | None = None,
    verify: bool | str = True,
) -> str:
    """Push blobs and manifests with the plain distribution API; return the top digest.

    ``headers(scope)`` may return auth headers for a scope such as
    ``repository:REPO:pull,push`` (the token-auth fixture supplies it).
    """
    import requests

    s = session or requests.Session()
    h = headers(f"repository:{repository}:pull,push") if headers else {}

    def put_blob(digest: str, data: bytes) -> None:
        r = s.head(f"{base_url}/v2/{repository}/blobs/{digest}", headers=h, verify=verify)
        if r.status_code == 200:
            return
        r = s.post(f"{base_url}/v2/{repository}/blobs/uploads/", headers=h, verify=verify)
        r.raise_for_status()
        loc = r.headers["Location"]
        if loc.startswith("/"):
            loc = base_url + loc
        sep = "&" if "?" in loc else "?"
        r = s.put(f"{loc}{sep}digest={digest}", data=data,
                  headers={**h, "Content-Type": "application/octet-stream"}, verify=verify)
        r.raise_for_status()

    def put_manifest(ref: str, data: bytes, mt: str) -> None:
        r = s.put(f"{base_url}/v2/{repository}/manifests/{ref}", data=data, headers={**h, "Content-Type": mt}, verify=verify)
        r.raise_for_status()

    images = item.images if isinstance(item, BuiltIndex) else [item]
    for img in images:
        for digest, data in img.blobs.items():
            put_blob(digest, data)
        put_manifest(img.digest if isinstance(item, BuiltIndex) else tag, img.manifest, img.manifest_media_type)
    if isinstance(item, BuiltIndex):
        put_manifest(tag, item.index, item.media_type)
    return item.digest
