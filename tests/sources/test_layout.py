"""OCI image layouts as a directory (oci-dir:) and as a tar (oci-archive:), built by the tests' builder."""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import tarfile
from pathlib import Path

import pytest

from imagelint.errors import DigestMismatchError, ImageFormatError, SourceError, UsageError
from imagelint.image import Platform
from imagelint.reference import ImageReference, parse_reference
from imagelint.sources import SourceOptions, open_images
from tests.sources.archive_helpers import (
    built_tars,
    flip_byte_in_file,
    flip_byte_in_member,
    image_tars,
    read_layer,
    rewrite_tar,
    sample_image,
    tar_info,
)
from tests.support.imagebuilder import (
    File,
    ImageSpec,
    LayerSpec,
    build_index,
    sha256,
    write_docker_archive,
    write_oci_archive,
    write_oci_layout,
)


def _blob_path(root: Path, digest: str) -> Path:
    algo, hexd = digest.split(":")
    return root / "blobs" / algo / hexd


@pytest.fixture(params=["oci-dir", "oci-archive"])
def make_layout(request, tmp_path):
    """Write ``tagged`` as the parametrised kind and return its reference prefix (``kind:path``)."""

    def make(tagged) -> str:
        if request.param == "oci-dir":
            return f"oci-dir:{write_oci_layout(tmp_path / 'layout', tagged)}"
        return f"oci-archive:{write_oci_archive(tmp_path / 'image.tar', tagged, tmp_path / 'work')}"

    return make


def test_single_image_reads_config_and_every_layer_kind(make_layout):
    built = sample_image(("gzip", "zstd", "none"), labels={"com.nvidia.cuda": "12.4"})
    ref = make_layout({"v1": built})
    [image] = open_images(ref)
    assert image.digest == built.digest
    assert image.config_digest == built.config_digest
    assert image.platform == Platform("linux", "amd64")
    assert image.config.env_map["CUDA_VERSION"] == "12.4.1"
    assert image.config.labels["com.nvidia.cuda"] == "12.4"
    assert [l.compression for l in image.layers] == ["gzip", "zstd", "none"]
    assert [l.digest for l in image.layers] == [d for d, _, _, _ in built.layers]
    assert [l.diff_id for l in image.layers] == built.diff_ids
    # The compressed blob comes back byte for byte, and its tar is the one built.
    assert [read_layer(l) for l in image.layers] == [b for _, b, _, _ in built.layers]
    assert image_tars(image) == built_tars(built)


def test_tag_selects_among_several_and_no_tag_is_a_usage_error(make_layout):
    a = ImageSpec(layers=[[File("a", b"A")]], env={"WHICH": "a"}).build()
    b = ImageSpec(layers=[[File("b", b"B")]], env={"WHICH": "b"}).build()
    ref = make_layout({"first": a, "second": b})
    assert open_images(f"{ref}:second")[0].config.env_map["WHICH"] == "b"
    assert open_images(f"{ref}:first")[0].config.env_map["WHICH"] == "a"
    with pytest.raises(UsageError, match="first, second"):
        open_images(ref)
    with pytest.raises(SourceError, match="no image named 'third'"):
        open_images(f"{ref}:third")


def test_index_platform_selection(make_layout):
    amd = ImageSpec(layers=[[File("arch", b"amd64")]]).build()
    arm = ImageSpec(layers=[[File("arch", b"arm64")]], architecture="arm64", variant="v8").build()
    index = build_index([amd, arm])
    ref = make_layout({"multi": index})

    [default] = open_images(ref)
    assert default.platform == Platform("linux", "amd64") and default.digest == amd.digest
    assert default.index_digest == index.digest

    [arm_image] = open_images(ref, SourceOptions(platform=Platform.parse("linux/arm64"), platform_explicit=True))
    assert arm_image.digest == arm.digest and arm_image.platform == Platform("linux", "arm64", "v8")
    assert image_tars(arm_image) == built_tars(arm)

    both = open_images(ref, SourceOptions(all_platforms=True))
    assert sorted(str(i.platform) for i in both) == ["linux/amd64", "linux/arm64/v8"]

    with pytest.raises(SourceError, match=r"no image for platform linux/s390x \(available: linux/amd64, linux/arm64/v8\)"):
        open_images(ref, SourceOptions(platform=Platform.parse("linux/s390x")))


def test_docker_media_types_and_manifest_list(tmp_path):
    amd = sample_image(("gzip", "none"), docker=True)
    arm = sample_image(("gzip",), docker=True, architecture="arm64")
    root = write_oci_layout(tmp_path / "layout", {"latest": build_index([amd, arm], docker=True)})
    [image] = open_images(f"oci-dir:{root}")
    assert image.manifest_media_type == "application/vnd.docker.distribution.manifest.v2+json"
    assert [l.media_type for l in image.layers] == [
        "application/vnd.docker.image.rootfs.diff.tar.gzip",
        "application/vnd.docker.image.rootfs.diff.tar",
    ]
    assert image_tars(image) == built_tars(amd)


def test_corrupted_layer_blob_fails_at_end_of_stream(tmp_path):
    built = sample_image(("gzip",))
    root = write_oci_layout(tmp_path / "layout", {"v1": built})
    flip_byte_in_file(_blob_path(root, built.layers[0][0]), 20)
    [image] = open_images(f"oci-dir:{root}")  # same size: found only when the bytes are read
    with pytest.raises(DigestMismatchError, match="digest mismatch"):
        read_layer(image.layers[0])


def test_corrupted_config_and_manifest_fail_at_open(tmp_path):
    built = sample_image(("gzip",))
    root = write_oci_layout(tmp_path / "layout", {"v1": built})
    flip_byte_in_file(_blob_path(root, built.config_digest), 5)
    with pytest.raises(DigestMismatchError, match="config"):
        open_images(f"oci-dir:{root}")
    root2 = write_oci_layout(tmp_path / "layout2", {"v1": built})
    flip_byte_in_file(_blob_path(root2, built.digest), 5)
    with pytest.raises(DigestMismatchError):
        open_images(f"oci-dir:{root2}")


def test_corrupted_blob_inside_oci_archive(tmp_path):
    built = sample_image(("zstd",))
    path = write_oci_archive(tmp_path / "image.tar", {"v1": built}, tmp_path / "work")
    flip_byte_in_member(path, "blobs/sha256/" + built.layers[0][0].split(":")[1], within=10)
    [image] = open_images(f"oci-archive:{path}")
    with pytest.raises(DigestMismatchError):
        read_layer(image.layers[0])


def test_missing_blob(tmp_path):
    built = sample_image(("gzip", "gzip"))
    root = write_oci_layout(tmp_path / "layout", {"v1": built})
    _blob_path(root, built.layers[1][0]).unlink()
    with pytest.raises(ImageFormatError, match="layer 1 .*missing"):
        open_images(f"oci-dir:{root}")


def test_uncompressed_layer_that_is_not_its_diff_id(tmp_path):
    wrong = sha256(b"something else")
    built = ImageSpec(
        layers=[LayerSpec([File("a", b"a")], compression="none")],
        extra_config={"rootfs": {"type": "layers", "diff_ids": [wrong]}},
    ).build()
    root = write_oci_layout(tmp_path / "layout", {"v1": built})
    with pytest.raises(ImageFormatError, match="diff_id"):
        open_images(f"oci-dir:{root}")


def test_diff_id_count_mismatch(tmp_path):
    built = ImageSpec(
        layers=[[File("a", b"a")], [File("b", b"b")]],
        extra_config={"rootfs": {"type": "layers", "diff_ids": [sha256(b"x")]}},
    ).build()
    root = write_oci_layout(tmp_path / "layout", {"v1": built})
    with pytest.raises(ImageFormatError, match="1 diff_ids but the manifest has 2 layers"):
        open_images(f"oci-dir:{root}")


def test_containerd_full_name_selects_entry(tmp_path):
    # Docker 25+'s save format is an OCI layout whose entries carry io.containerd.image.name.
    built = sample_image(("gzip",))
    path = write_docker_archive(tmp_path / "d.tar", built, ["example.com/gpu/cuda:12.4"], layout="oci")
    ref = ImageReference("oci-archive", str(path), "example.com/gpu/cuda:12.4")
    assert open_images(ref)[0].digest == built.digest
    assert open_images(ImageReference("oci-archive", str(path), "12.4"))[0].digest == built.digest


def test_truncated_and_non_tar_archives(tmp_path):
    built = sample_image(("gzip",))
    path = write_oci_archive(tmp_path / "image.tar", {"v1": built}, tmp_path / "work")
    data = path.read_bytes()
    with tarfile.open(path) as tf:
        index_json = tf.getmember("index.json")
    truncated = tmp_path / "truncated.tar"
    truncated.write_bytes(data[: index_json.offset_data + 10])  # cut inside index.json
    with pytest.raises(ImageFormatError, match=f"{truncated}: archive truncated"):
        open_images(f"oci-archive:{truncated}")
    truncated.write_bytes(data[: index_json.offset])  # cut at a header: index.json is simply gone
    with pytest.raises(ImageFormatError, match=f"{truncated}: not an OCI image layout"):
        open_images(f"oci-archive:{truncated}")
    not_tar = tmp_path / "notes.txt"
    not_tar.write_bytes(b"hello, I am not a tar file\n" * 40)
    with pytest.raises(ImageFormatError, match=f"{not_tar}: not a readable tar archive"):
        open_images(f"oci-archive:{not_tar}")
    gz = tmp_path / "image.tar.gz"
    gz.write_bytes(gzip.compress(data))
    with pytest.raises(ImageFormatError, match="compressed archive"):
        open_images(f"oci-archive:{gz}")
    with pytest.raises(SourceError, match="cannot open"):
        open_images(f"oci-archive:{tmp_path / 'absent.tar'}")


@pytest.mark.parametrize("hostile", ["../escape", "/etc/passwd", "blobs/../../x"])
def test_hostile_member_names_are_refused(tmp_path, hostile):
    built = sample_image(("gzip",))
    path = write_oci_archive(tmp_path / "image.tar", {"v1": built}, tmp_path / "work")
    bad = rewrite_tar(path, tmp_path / "bad.tar", extra=[(tar_info(hostile), b"boom")])
    with pytest.raises(ImageFormatError, match="refusing member name"):
        open_images(f"oci-archive:{bad}")


def test_symlink_out_of_layout_dir_is_refused(tmp_path):
    built = sample_image(("gzip",))
    root = write_oci_layout(tmp_path / "layout", {"v1": built})
    outside = tmp_path / "outside-blob"
    blob = _blob_path(root, built.layers[0][0])
    outside.write_bytes(blob.read_bytes())
    blob.unlink()
    os.symlink(outside, blob)
    with pytest.raises(ImageFormatError, match="leaves the layout"):
        open_images(f"oci-dir:{root}")


def test_index_json_missing_or_not_an_index(tmp_path):
    built = sample_image(("gzip",))
    root = write_oci_layout(tmp_path / "layout", {"v1": built})
    (root / "index.json").write_bytes(built.manifest)
    with pytest.raises(ImageFormatError, match="expected an image index"):
        open_images(f"oci-dir:{root}")
    (root / "index.json").unlink()
    with pytest.raises(ImageFormatError, match="no index.json"):
        open_images(f"oci-dir:{root}")


def test_parse_reference_sniffs_each_on_disk_format(tmp_path):
    built = sample_image(("gzip",))
    layout = write_oci_layout(tmp_path / "layout", {"v1": built})
    oci_tar = write_oci_archive(tmp_path / "oci.tar", {"v1": built}, tmp_path / "work")
    classic = write_docker_archive(tmp_path / "classic.tar", built, ["example/a:1"])
    docker25 = write_docker_archive(tmp_path / "docker25.tar", built, ["example/a:1"], layout="oci")
    assert parse_reference(str(layout)).kind == "oci-dir"
    assert parse_reference(f"{layout}:v1") == ImageReference("oci-dir", str(layout), "v1", f"{layout}:v1")
    assert parse_reference(str(oci_tar)).kind == "oci-archive"
    assert parse_reference(str(classic)).kind == "docker-archive"
    assert parse_reference(str(docker25)).kind == "docker-archive"
    # ...and each bare path opens to the same image.
    for path in (layout, oci_tar, classic, docker25):
        [image] = open_images(str(path))
        assert image.config_digest == built.config_digest
        assert image_tars(image) == built_tars(built)
    with tarfile.open(tmp_path / "other.tar", "w") as tf:
        tf.addfile(tar_info("hello.txt"))
    with pytest.raises(UsageError):
        parse_reference(str(tmp_path / "other.tar"))


@pytest.mark.parametrize("text", ["./x.tar", "imgs/nonexistent.tar", "/nope/layout", "../up/image.tar.gz", "~/missing.tgz",
                                  "./layout:v1", "app.tar"])
def test_a_missing_path_is_no_such_file_not_a_registry_lookup(text, tmp_path, monkeypatch):
    from imagelint.errors import SourceError

    monkeypatch.chdir(tmp_path)
    with pytest.raises(SourceError, match="no such file or directory") as exc:
        parse_reference(text)
    assert exc.value.exit_code == 3


def test_a_missing_path_with_a_newline_in_its_name_is_named_on_one_line(tmp_path, monkeypatch):
    from imagelint.errors import SourceError

    monkeypatch.chdir(tmp_path)
    with pytest.raises(SourceError) as exc:
        parse_reference("/\n0")  # found by tests/hostile/test_fuzz.py
    assert exc.value.message == "/\\n0: no such file or directory"


def test_names_that_are_not_paths_stay_registry_names(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert parse_reference("ghcr.io/org/app:1.2").kind == "auto"
    assert parse_reference("registry:ghcr.io/org/app.tar").kind == "registry"  # the escape hatch for such names
    layout = write_oci_layout(tmp_path / "home" / "layout", {"v1": sample_image(("gzip",))})
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert parse_reference("~/layout").value == str(layout)


@pytest.mark.parametrize("kind", ["oci-archive", "docker-archive"])
def test_archives_packed_with_tar_dot_are_read(kind, tmp_path):
    """`tar -C DIR -cf image.tar .` writes `./`, `./index.json` …: the root entry is skipped."""
    built = sample_image(("gzip",))
    if kind == "oci-archive":
        src = write_oci_layout(tmp_path / "layout", {"v1": built})
    else:
        src = tmp_path / "save"
        with tarfile.open(write_docker_archive(tmp_path / "saved.tar", built, ["example/a:1"])) as tf:
            tf.extractall(src, filter="data")
    archive = tmp_path / "image.tar"
    subprocess.run(["tar", "-C", str(src), "-cf", str(archive), "."], check=True)
    with tarfile.open(archive) as tf:
        assert tf.getnames()[0] in (".", "./")
    [image] = open_images(str(archive))
    assert image.config_digest == built.config_digest and image_tars(image) == built_tars(built)


def test_a_file_named_dot_is_still_refused(tmp_path):
    from imagelint.errors import ImageFormatError

    archive = tmp_path / "odd.tar"
    with tarfile.open(archive, "w") as tf:
        tf.addfile(tar_info("index.json"), io.BytesIO(b""))
        info = tar_info("./")
        info.type = tarfile.REGTYPE
        tf.addfile(info, io.BytesIO(b""))
    with pytest.raises((ImageFormatError, UsageError)):
        open_images(f"oci-archive:{archive}")
