"""docker-save archives, classic and Docker 25+ (OCI-in-tar), read in place."""

from __future__ import annotations

import gzip
import json
import tarfile
from pathlib import Path

import pytest

from imagelint.errors import DigestMismatchError, ImageFormatError, SourceError
from imagelint.reference import ImageReference
from imagelint.sources import open_images
from tests.sources.archive_helpers import (
    built_tars,
    flip_byte_in_member,
    image_tars,
    read_layer,
    rewrite_tar,
    sample_image,
    tar_info,
)
from tests.support.imagebuilder import File, ImageSpec, LayerSpec, sha256, write_docker_archive

UNCOMPRESSED = "application/vnd.docker.image.rootfs.diff.tar"


def _manifest(path: Path) -> list[dict]:
    with tarfile.open(path) as tf:
        return json.loads(tf.extractfile("manifest.json").read())


def test_classic_layout(tmp_path):
    built = sample_image(("gzip", "zstd"), labels={"a": "b"})
    path = write_docker_archive(tmp_path / "img.tar", built, ["example/cuda:12.4"])
    [image] = open_images(f"docker-archive:{path}")
    assert image.source == "docker-archive" and image.ref == f"docker-archive:{path}"
    assert image.digest is None  # a classic archive has no manifest
    assert image.config_digest == built.config_digest
    assert image.config.labels["a"] == "b"
    # Classic layers are uncompressed: the blob digest is the diff_id.
    assert [l.digest for l in image.layers] == built.diff_ids
    assert [l.diff_id for l in image.layers] == built.diff_ids
    assert {l.media_type for l in image.layers} == {UNCOMPRESSED}
    assert image_tars(image) == built_tars(built)
    assert [sha256(read_layer(l)) for l in image.layers] == built.diff_ids


def test_docker25_layout_uses_the_oci_manifest(tmp_path):
    built = sample_image(("gzip", "zstd", "none"))
    path = write_docker_archive(tmp_path / "img.tar", built, ["example/cuda:12.4"], layout="oci")
    [image] = open_images(f"docker-archive:{path}")
    assert image.source == "docker-archive"
    assert image.digest == built.digest and image.config_digest == built.config_digest
    assert [l.digest for l in image.layers] == [d for d, _, _, _ in built.layers]
    assert [l.compression for l in image.layers] == ["gzip", "zstd", "none"]
    assert image_tars(image) == built_tars(built)


def test_docker25_layout_without_index_sniffs_compression(tmp_path):
    built = sample_image(("gzip", "zstd", "none"))
    path = write_docker_archive(tmp_path / "img.tar", built, ["example/cuda:12.4"], layout="oci")
    bare = rewrite_tar(path, tmp_path / "bare.tar", replace={"index.json": None})
    [image] = open_images(f"docker-archive:{bare}")
    assert image.digest is None
    assert [l.compression for l in image.layers] == ["gzip", "zstd", "none"]
    assert [l.digest for l in image.layers] == [d for d, _, _, _ in built.layers]
    assert image_tars(image) == built_tars(built)


def test_select_entry_by_tag_among_several(tmp_path):
    a = ImageSpec(layers=[[File("a", b"A")]], env={"WHICH": "a"}).build()
    b = ImageSpec(layers=[[File("b", b"B")]], env={"WHICH": "b"}).build()
    pa = write_docker_archive(tmp_path / "a.tar", a, ["example/a:1"])
    pb = write_docker_archive(tmp_path / "b.tar", b, ["example/b:2"])
    # One archive holding both, as `docker save example/a:1 example/b:2` writes it.
    with tarfile.open(pb) as tf:
        b_members = [(i, tf.extractfile(i).read()) for i in tf if i.name not in ("manifest.json", "repositories")]
    both = rewrite_tar(pa, tmp_path / "both.tar",
                       replace={"manifest.json": json.dumps(_manifest(pa) + _manifest(pb)).encode()},
                       extra=b_members)
    assert open_images(f"docker-archive:{both}")[0].config.env_map["WHICH"] == "a"
    for tag in ("example/b:2", "docker.io/example/b:2", "2"):
        [image] = open_images(ImageReference("docker-archive", str(both), tag))
        assert image.config.env_map["WHICH"] == "b"
        assert image_tars(image) == built_tars(b)
    with pytest.raises(SourceError, match="no image tagged 'example/c:3'.*example/a:1, example/b:2"):
        open_images(ImageReference("docker-archive", str(both), "example/c:3"))


def test_repeated_layer_stored_as_symlink(tmp_path):
    # Docker's classic save writes a layer repeated in one image once, plus a symlink.
    built = ImageSpec(layers=[[File("a", b"same")], [File("b", b"other")], [File("a", b"same")]]).build()
    path = write_docker_archive(tmp_path / "img.tar", built, ["example/rep:1"])
    entry = _manifest(path)[0]
    entry["Layers"][2] = "third/layer.tar"
    linked = rewrite_tar(path, tmp_path / "linked.tar", replace={"manifest.json": json.dumps([entry]).encode()},
                         extra=[tar_info("third/layer.tar", tarfile.SYMTYPE, "../" + entry["Layers"][0])])
    [image] = open_images(f"docker-archive:{linked}")
    assert image_tars(image) == built_tars(built)


def test_corrupted_classic_layer(tmp_path):
    built = sample_image(("gzip",))
    path = write_docker_archive(tmp_path / "img.tar", built, ["example/x:1"])
    flip_byte_in_member(path, _manifest(path)[0]["Layers"][0], within=600)
    [image] = open_images(f"docker-archive:{path}")
    with pytest.raises(DigestMismatchError, match="layer 0"):
        read_layer(image.layers[0])


def test_corrupted_config(tmp_path):
    built = sample_image(("gzip",))
    path = write_docker_archive(tmp_path / "img.tar", built, ["example/x:1"])
    flip_byte_in_member(path, _manifest(path)[0]["Config"], within=3)
    with pytest.raises(DigestMismatchError, match="config"):
        open_images(f"docker-archive:{path}")


def test_classic_diff_id_that_does_not_match_the_layer(tmp_path):
    wrong = sha256(b"not this layer")
    built = ImageSpec(layers=[[File("a", b"a")]], extra_config={"rootfs": {"type": "layers", "diff_ids": [wrong]}}).build()
    path = write_docker_archive(tmp_path / "img.tar", built, ["example/x:1"])
    [image] = open_images(f"docker-archive:{path}")
    assert image.layers[0].digest == wrong
    with pytest.raises(DigestMismatchError, match="digest mismatch"):
        read_layer(image.layers[0])


def test_docker25_uncompressed_diff_id_mismatch(tmp_path):
    built = ImageSpec(layers=[LayerSpec([File("a", b"a")], compression="none")],
                      extra_config={"rootfs": {"type": "layers", "diff_ids": [sha256(b"x")]}}).build()
    path = write_docker_archive(tmp_path / "img.tar", built, ["example/x:1"], layout="oci")
    with pytest.raises(ImageFormatError, match="diff_id"):
        open_images(f"docker-archive:{path}")


def test_layer_count_must_match_diff_ids(tmp_path):
    built = ImageSpec(layers=[[File("a", b"a")], [File("b", b"b")]]).build()
    path = write_docker_archive(tmp_path / "img.tar", built, ["example/x:1"])
    entry = _manifest(path)[0]
    entry["Layers"] = entry["Layers"][:1]
    short = rewrite_tar(path, tmp_path / "short.tar", replace={"manifest.json": json.dumps([entry]).encode()})
    with pytest.raises(ImageFormatError, match="2 diff_ids but manifest.json has 1 layers"):
        open_images(f"docker-archive:{short}")


def test_missing_layer_member(tmp_path):
    built = sample_image(("gzip", "gzip"))
    path = write_docker_archive(tmp_path / "img.tar", built, ["example/x:1"])
    gone = rewrite_tar(path, tmp_path / "gone.tar", replace={_manifest(path)[0]["Layers"][1]: None})
    with pytest.raises(ImageFormatError, match="layer 1 .*missing"):
        open_images(f"docker-archive:{gone}")


def test_missing_manifest_truncated_and_not_tar(tmp_path):
    built = sample_image(("gzip",))
    path = write_docker_archive(tmp_path / "img.tar", built, ["example/x:1"])
    no_manifest = rewrite_tar(path, tmp_path / "nomanifest.tar", replace={"manifest.json": None})
    with pytest.raises(ImageFormatError, match=f"{no_manifest}: not a docker-save archive"):
        open_images(f"docker-archive:{no_manifest}")
    data = path.read_bytes()
    with tarfile.open(path) as tf:
        layer = tf.getmember(_manifest(path)[0]["Layers"][0])
    cut = tmp_path / "cut.tar"
    cut.write_bytes(data[: layer.offset_data + 100])
    with pytest.raises(ImageFormatError, match=f"{cut}: archive truncated"):
        open_images(f"docker-archive:{cut}")
    junk = tmp_path / "junk.tar"
    junk.write_bytes(b"\x00\x01garbage" * 100)
    with pytest.raises(ImageFormatError, match=f"{junk}: not a readable tar archive"):
        open_images(f"docker-archive:{junk}")
    gz = tmp_path / "img.tar.gz"
    gz.write_bytes(gzip.compress(data))
    with pytest.raises(ImageFormatError, match="compressed archive"):
        open_images(f"docker-archive:{gz}")


@pytest.mark.parametrize("hostile", ["../../etc/passwd", "/etc/shadow", "a/../../b"])
def test_hostile_names(tmp_path, hostile):
    built = sample_image(("gzip",))
    path = write_docker_archive(tmp_path / "img.tar", built, ["example/x:1"])
    # A manifest.json that points outside the archive...
    entry = _manifest(path)[0]
    entry["Layers"][0] = hostile
    bad_ref = rewrite_tar(path, tmp_path / "badref.tar", replace={"manifest.json": json.dumps([entry]).encode()})
    with pytest.raises(ImageFormatError, match="refusing member name"):
        open_images(f"docker-archive:{bad_ref}")
    # ...and an archive carrying such a member at all.
    bad_member = rewrite_tar(path, tmp_path / "badmember.tar", extra=[(tar_info(hostile), b"x")])
    with pytest.raises(ImageFormatError, match="refusing member name"):
        open_images(f"docker-archive:{bad_member}")
    # A symlinked layer pointing out of the archive.
    entry = _manifest(path)[0]
    entry["Layers"][0] = "evil/layer.tar"
    bad_link = rewrite_tar(path, tmp_path / "badlink.tar", replace={"manifest.json": json.dumps([entry]).encode()},
                           extra=[tar_info("evil/layer.tar", tarfile.SYMTYPE, "../../../etc/passwd")])
    with pytest.raises(ImageFormatError, match="refusing member name"):
        open_images(f"docker-archive:{bad_link}")
