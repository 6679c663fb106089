"""Hostile manifests, indexes and configs: exit 3 with one line saying what is wrong.

Each case is served two ways: as an OCI layout on disk, and by a scripted registry
(the real registry refuses to store most of these documents). Digest mismatches
and diff_id mismatches also run against the REAL registry, by corrupting its storage.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from imagelint.errors import EXIT_UNREADABLE
from tests.hostile.cli import assert_unreadable, inspect_api, run_cli
from tests.hostile.scripted_registry import ScriptedRegistry
from tests.support.hostile_images import image_of, publish, tar_layer
from tests.support.imagebuilder import (
    OCI_INDEX,
    OCI_MANIFEST,
    BuiltImage,
    File,
    ImageSpec,
    LayerSpec,
    build_index,
    canonical_json,
    sha256,
)

MiB = 1 << 20


def _base() -> BuiltImage:
    marker = os.urandom(8).hex().encode()
    return image_of([tar_layer([File("usr/local/cuda-12.4/version.json", b'{"cuda":{"version":"12.4.1"}}'),
                                File("etc/marker", marker)])], env={"CUDA_VERSION": "12.4.1"})


def _with_manifest(built: BuiltImage, change) -> tuple[bytes, dict[str, bytes]]:  # type: ignore[no-untyped-def]
    doc = json.loads(built.manifest)
    change(doc)
    return canonical_json(doc), dict(built.blobs)


def _with_config(built: BuiltImage, config: bytes) -> tuple[bytes, dict[str, bytes]]:
    doc = json.loads(built.manifest)
    doc["config"]["digest"] = sha256(config)
    doc["config"]["size"] = len(config)
    blobs = dict(built.blobs)
    blobs[sha256(config)] = config
    return canonical_json(doc), blobs


def _config_change(built: BuiltImage, change) -> tuple[bytes, dict[str, bytes]]:  # type: ignore[no-untyped-def]
    cfg = json.loads(built.config)
    change(cfg)
    return _with_config(built, canonical_json(cfg))


def _huge() -> bytes:
    return b'{"schemaVersion":2,"mediaType":"' + OCI_MANIFEST.encode() + b'","pad":"' + b"x" * (9 * MiB) + b'"}'


# name -> (top document, blobs, Content-Type the registry sends, fragment of the one-line error)
def cases() -> dict[str, tuple[bytes, dict[str, bytes], str, str]]:
    b = _base()
    out: dict[str, tuple[bytes, dict[str, bytes], str, str]] = {}

    def put(name: str, top_and_blobs: tuple[bytes, dict[str, bytes]], fragment: str, ctype: str = OCI_MANIFEST) -> None:
        out[name] = (top_and_blobs[0], top_and_blobs[1], ctype, fragment)

    put("wrong-media-type", _with_manifest(b, lambda d: d.update(mediaType="application/vnd.example.thing+json")),
        "unsupported media type", "application/vnd.example.thing+json")
    put("schema-version-1", _with_manifest(b, lambda d: d.update(schemaVersion=1)), "schema 1")
    put("schema-version-3", _with_manifest(b, lambda d: d.update(schemaVersion=3)), "unsupported schemaVersion")
    put("schema-version-string", _with_manifest(b, lambda d: d.update(schemaVersion="2")), "unsupported schemaVersion")
    put("json-array", (b"[1, 2, 3]", b.blobs), "expected a JSON object")
    put("json-string", (b'"manifest"', b.blobs), "expected a JSON object")
    put("json-null", (b"null", b.blobs), "expected a JSON object")
    put("not-json", (b'{"schemaVersion": 2, "layers": [', b.blobs), "JSON")
    put("not-utf8", (b'{"schemaVersion": 2, "x": "\xff\xfe"}', b.blobs), "JSON")
    put("deeply-nested-json", (b"[" * 100_000 + b"]" * 100_000, b.blobs), "JSON")
    put("huge-manifest", (_huge(), b.blobs), "8388608")
    put("layers-not-a-list", _with_manifest(b, lambda d: d.update(layers={"a": 1})), "no layers list")
    put("descriptor-bad-digest", _with_manifest(b, lambda d: d["layers"][0].update(digest="sha256:zz")), "digest")
    put("descriptor-md5-digest", _with_manifest(b, lambda d: d["layers"][0].update(digest="md5:" + "0" * 32)), "digest")
    put("descriptor-negative-size", _with_manifest(b, lambda d: d["layers"][0].update(size=-1)), "size")
    put("descriptor-size-string", _with_manifest(b, lambda d: d["config"].update(size="12")), "size")
    put("config-not-object", _with_config(b, b"[]"), "expected a JSON object")
    put("config-huge", _with_config(b, b'{"pad":"' + b"x" * (9 * MiB) + b'"}'), "8388608")
    put("diff-ids-count", _config_change(b, lambda c: c["rootfs"].update(diff_ids=c["rootfs"]["diff_ids"] * 2)),
        "diff_ids")
    put("diff-ids-not-a-list", _config_change(b, lambda c: c["rootfs"].update(diff_ids="sha256:abc")), "diff_ids")
    put("env-not-a-list", _config_change(b, lambda c: c["config"].update(Env="CUDA_VERSION=12.4.1")), "Env")
    put("index-entry-without-platform-fields", (
        canonical_json({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": [
            {"mediaType": OCI_MANIFEST, "digest": b.digest, "size": len(b.manifest), "platform": {"os": "linux"}}]}),
        {**b.blobs, b.digest: b.manifest}), "platform", OCI_INDEX)
    put("index-manifests-not-a-list", (canonical_json({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": {}}),
                                       b.blobs), "no manifests list", OCI_INDEX)
    return out


CASES = cases()


def _layout(root: Path, top: bytes, blobs: dict[str, bytes], media_type: str) -> str:
    (root / "blobs" / "sha256").mkdir(parents=True, exist_ok=True)
    for digest, data in {**blobs, sha256(top): top}.items():
        (root / "blobs" / "sha256" / digest.split(":")[1]).write_bytes(data)
    (root / "oci-layout").write_text('{"imageLayoutVersion":"1.0.0"}')
    entry = {"mediaType": media_type, "digest": sha256(top), "size": len(top),
             "annotations": {"org.opencontainers.image.ref.name": "t"}}
    (root / "index.json").write_bytes(canonical_json({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": [entry]}))
    return f"oci-dir:{root}:t"


@pytest.fixture(scope="module")
def scripted():
    reg = ScriptedRegistry()
    yield reg
    reg.stop()


def _serve(reg: ScriptedRegistry, repo: str, top: bytes, blobs: dict[str, bytes], media_type: str) -> str:
    reg.manifest(repo, "t", top, media_type, **{"Docker-Content-Digest": sha256(top)})
    reg.manifest(repo, sha256(top), top, media_type, **{"Docker-Content-Digest": sha256(top)})
    for digest, data in blobs.items():
        reg.blob(repo, digest, data)
        reg.manifest(repo, digest, data, OCI_INDEX if b'"manifests"' in data[:200] else OCI_MANIFEST)
    return f"registry:{reg.host}/{repo}:t"


@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_documents_exit_3_naming_the_problem(case, scripted, tmp_path):
    top, blobs, media_type, fragment = CASES[case]
    refs = {"oci-dir": _layout(tmp_path / "layout", top, blobs, media_type),
            "registry": _serve(scripted, f"docs/{case}", top, blobs, media_type)}
    for transport, ref in refs.items():
        api = inspect_api(ref, (scripted.host,), retries=0)
        assert api.exit_code == EXIT_UNREADABLE, (transport, api)
        assert fragment.lower() in api.message.lower(), (transport, api.message)
        assert len(api.message) < 600, (transport, len(api.message))  # a huge document is not echoed back


@pytest.mark.parametrize("case", ["json-array", "huge-manifest", "diff-ids-count", "index-entry-without-platform-fields"])
def test_hostile_documents_through_the_console_script(case, scripted, tmp_path):
    top, blobs, media_type, fragment = CASES[case]
    ref = _serve(scripted, f"cli/{case}", top, blobs, media_type)
    assert_unreadable(run_cli("inspect", ref, "--insecure-registry", scripted.host), fragment)


# --- indexes that loop or nest without end (layout crafted directly) ----------------------------------------


def test_an_index_pointing_to_itself_is_refused(tmp_path):
    # No content can contain its own sha256, so a self-reference is always also a digest mismatch:
    # the blob is stored under the digest it names, and must be refused either way.
    fake = "sha256:" + "ab" * 32
    index = canonical_json({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": [
        {"mediaType": OCI_INDEX, "digest": fake, "size": 0}]})
    index = index.replace(b'"size":0', b'"size":%d' % len(index))
    root = tmp_path / "layout"
    (root / "blobs" / "sha256").mkdir(parents=True)
    (root / "blobs" / "sha256" / fake.split(":")[1]).write_bytes(index)
    (root / "oci-layout").write_text('{"imageLayoutVersion":"1.0.0"}')
    (root / "index.json").write_bytes(canonical_json({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": [
        {"mediaType": OCI_INDEX, "digest": fake, "size": len(index), "annotations": {"org.opencontainers.image.ref.name": "t"}}]}))
    api = inspect_api(f"oci-dir:{root}:t")
    assert api.exit_code == EXIT_UNREADABLE
    assert any(w in api.message for w in ("itself", "digest", "nested")), api.message


def test_indexes_nested_past_the_bound_are_refused(tmp_path, scripted):
    built = _base()
    top: bytes = built.manifest
    top_type = OCI_MANIFEST
    blobs = dict(built.blobs)
    for _ in range(6):  # six real, correctly hashed index levels
        doc = canonical_json({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": [
            {"mediaType": top_type, "digest": sha256(top), "size": len(top),
             "platform": {"os": "linux", "architecture": "amd64"}}]})
        blobs[sha256(top)] = top
        top, top_type = doc, OCI_INDEX
    for ref in (_layout(tmp_path / "layout", top, blobs, OCI_INDEX), _serve(scripted, "docs/nested", top, blobs, OCI_INDEX)):
        api = inspect_api(ref, (scripted.host,), retries=0)
        assert api.exit_code == EXIT_UNREADABLE and "nested deeper" in api.message, api.message


# --- digest mismatches on the REAL registry and on disk -----------------------------------------------------


def test_digest_mismatch_on_every_kind_of_blob(plain_registry, tmp_path):
    # Three images, one corrupted piece each: the manifest (by digest), the config, a layer.
    for what in ("manifest", "config", "layer"):
        built = _base()
        refs = publish(built, tmp_path / what, plain_registry)
        layout_blobs = tmp_path / what / "layout" / "blobs" / "sha256"
        digest = {"manifest": built.digest, "config": built.config_digest, "layer": built.layers[0][0]}[what]
        for path in (plain_registry.blob_path(digest), layout_blobs / digest.split(":")[1]):
            data = bytearray(path.read_bytes())
            data[len(data) // 2] ^= 0xFF
            path.write_bytes(bytes(data))
        registry_ref = refs["registry"].rsplit(":", 1)[0] + "@" + built.digest
        for ref in (registry_ref, refs["oci-dir"]):
            api = inspect_api(ref, (plain_registry.host,), retries=0)
            assert api.exit_code == EXIT_UNREADABLE, (what, ref, api)
            # a flipped byte in a gzip layer may trip the CRC before the digest: both are refusals
            assert any(w in api.message.lower() for w in ("digest", "mismatch", "corrupt")), (what, api.message)


def test_tag_answer_whose_digest_header_lies(scripted):
    built = _base()
    repo = "docs/lying-header"
    scripted.manifest(repo, "t", built.manifest, OCI_MANIFEST, **{"Docker-Content-Digest": "sha256:" + "0" * 64})
    for digest, data in built.blobs.items():
        scripted.blob(repo, digest, data)
    api = inspect_api(f"registry:{scripted.host}/{repo}:t", (scripted.host,), retries=0)
    assert api.exit_code == EXIT_UNREADABLE and "digest" in api.message.lower(), api.message


def test_uncompressed_layer_that_is_not_its_diff_id(plain_registry, tmp_path):
    layer = tar_layer([File("etc/a", os.urandom(16).hex().encode())], "none")
    other = tar_layer([File("etc/b", b"b")], "none")
    built = image_of([layer], diff_ids=[other.diff_id])
    refs = publish(built, tmp_path / "img", plain_registry)
    for transport in ("oci-dir", "docker-archive", "registry"):
        api = inspect_api(refs[transport], (plain_registry.host,), retries=0)
        assert api.exit_code in (0, EXIT_UNREADABLE), api
        if transport != "registry":  # local sources verify uncompressed layers against diff_ids
            assert api.exit_code == EXIT_UNREADABLE and "diff" in api.message.lower(), (transport, api.message)


def test_config_without_os_or_architecture(tmp_path, scripted):
    built = ImageSpec(layers=[LayerSpec([File("etc/x", b"x")])], extra_config={}).build()
    cfg = json.loads(built.config)
    del cfg["architecture"], cfg["os"]
    top, blobs = _with_config(built, canonical_json(cfg))
    for ref in (_layout(tmp_path / "layout", top, blobs, OCI_MANIFEST), _serve(scripted, "docs/noarch", top, blobs, OCI_MANIFEST)):
        api = inspect_api(ref, (scripted.host,), retries=0)
        # Either a clear refusal or a report; never a traceback (inspect_api fails the test on other exceptions).
        assert api.exit_code in (0, EXIT_UNREADABLE), api
        if api.exit_code:
            assert "architecture" in api.message or "os" in api.message, api.message
    index = build_index([built])
    assert index.digest  # (index of a platform-less config: covered by the index-entry case above)


def test_a_blob_longer_than_its_descriptor_is_refused(scripted):
    built = _base()
    repo = "docs/long-blob"
    scripted.manifest(repo, "t", built.manifest, OCI_MANIFEST, **{"Docker-Content-Digest": built.digest})
    for digest, data in built.blobs.items():
        scripted.blob(repo, digest, data + (bytes(1 << 20) if digest == built.layers[0][0] else b""))
    api = inspect_api(f"registry:{scripted.host}/{repo}:t", (scripted.host,), retries=0)
    assert api.exit_code == EXIT_UNREADABLE and "layer 0" in api.message or "blob" in api.message, api.message
