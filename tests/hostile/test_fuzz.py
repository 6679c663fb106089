"""One fuzz target per parser: any exception that is not imagelint's own error is a failure.

``hypothesis`` with bounded examples and no deadline, a few seconds each
(``IMAGELINT_FUZZ_EXAMPLES=2000`` for a longer local run). The tar walk over random
and corrupted bytes is fuzzed in ``tests/layers/test_hostile.py``; here it gets
structured hostile member lists (names, types, link targets) through the reader and
the merged view.
"""

from __future__ import annotations

import io
import json
import os
import tarfile
from typing import Any, Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from imagelint.errors import ImagelintError

EXAMPLES = int(os.environ.get("IMAGELINT_FUZZ_EXAMPLES", "80"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=False)


def only_imagelint_errors(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except ImagelintError as exc:
        assert "\n" not in exc.message, exc.message
        assert exc.exit_code in (2, 3), exc.exit_code
        return None


# --- JSON documents: manifests, indexes, configs ----------------------------------------------------------

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(min_value=-2**70, max_value=2**70),
                    st.floats(allow_nan=True), st.text(max_size=30),
                    st.sampled_from(["application/vnd.oci.image.manifest.v1+json", "application/vnd.oci.image.index.v1+json",
                                     "application/vnd.docker.distribution.manifest.v2+json",
                                     "application/vnd.docker.distribution.manifest.list.v2+json",
                                     "sha256:" + "a" * 64, "sha256:zz", "linux", "amd64", "arm64", "v8", 2]))
KEYS = st.sampled_from(["schemaVersion", "mediaType", "manifests", "layers", "config", "digest", "size", "platform",
                        "os", "architecture", "variant", "os.version", "os.features", "annotations", "urls",
                        "rootfs", "diff_ids", "type", "Env", "Entrypoint", "Cmd", "Labels", "WorkingDir", "User",
                        "history", "created_by", "empty_layer", "artifactType", "subject"]) | st.text(max_size=8)
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=6),
                    max_leaves=30)


def _document_bytes() -> st.SearchStrategy[bytes]:
    as_json = JSON.map(lambda v: json.dumps(v, allow_nan=True).encode())
    return st.one_of(as_json, st.binary(max_size=200), as_json.map(lambda b: b[: len(b) // 2]))


@FUZZ
@given(_document_bytes(), st.sampled_from([None, "application/vnd.oci.image.index.v1+json", "text/plain"]))
def test_fuzz_manifest_and_index_parsing(data: bytes, header: str | None) -> None:
    from imagelint.image import Platform
    from imagelint.sources.manifest import Index, parse_document, select_platforms

    doc = only_imagelint_errors(lambda: parse_document(data, "fuzz", header))
    if isinstance(doc, Index):
        only_imagelint_errors(lambda: select_platforms(doc, Platform.parse("linux/amd64"), False, "fuzz"))
        only_imagelint_errors(lambda: select_platforms(doc, Platform.parse("linux/arm64/v8"), True, "fuzz"))


@FUZZ
@given(_document_bytes(), st.integers(min_value=0, max_value=5))
def test_fuzz_config_parsing(data: bytes, layers: int) -> None:
    from imagelint.sources.manifest import check_diff_ids, parse_image_config

    config = only_imagelint_errors(lambda: parse_image_config(data, "fuzz config"))
    if config is not None:
        only_imagelint_errors(lambda: check_diff_ids(config, layers, "fuzz"))


@settings(FUZZ, max_examples=max(10, EXAMPLES // 3))  # fact collection is the slow part
@given(st.dictionaries(KEYS, JSON, max_size=6), st.dictionaries(KEYS, JSON, max_size=6))
def test_fuzz_config_through_facts(config_part: dict, container: dict) -> None:
    # A config that parses must also survive fact collection (env, labels, entrypoint of any shape).
    from imagelint.facts.collect import collect_image_facts
    from imagelint.image import Image, Platform
    from imagelint.sources.manifest import parse_image_config

    doc = {"architecture": "amd64", "os": "linux", "rootfs": {"type": "layers", "diff_ids": []}, **config_part,
           "config": container}
    config = only_imagelint_errors(lambda: parse_image_config(json.dumps(doc).encode(), "fuzz config"))
    if config is not None:
        image = Image(ref="fuzz", source="oci-dir", platform=Platform(config.os or "linux", config.architecture or "amd64"),
                      config=config, layers=())
        only_imagelint_errors(lambda: collect_image_facts(image, None))


# --- references --------------------------------------------------------------------------------------------


@FUZZ
@given(st.one_of(st.text(max_size=80), st.builds(lambda s, r: s + r, st.sampled_from(
    ["registry:", "docker:", "oci-dir:", "oci-archive:", "docker-archive:", ""]), st.text(max_size=60))))
def test_fuzz_references(text: str) -> None:
    from imagelint.reference import parse_reference, parse_registry_name

    only_imagelint_errors(lambda: parse_reference(text))
    only_imagelint_errors(lambda: parse_registry_name(text))


# --- NVIDIA_REQUIRE_* ----------------------------------------------------------------------------------------

REQ_ATOMS = st.sampled_from(["cuda", "driver", "arch", "brand", "cuda>=", "driver>=", "arch=", "brand=", ">=", "<=",
                             "=", ">", "<", "!=", " ", ",", "12.4", "535", "535.104.05", "sm_90", "9.0", "tesla",
                             "Tesla", "nvidia", "1", "0", "true", "false", "..", ".", "-", "x"])
REQ_TEXT = st.one_of(st.lists(REQ_ATOMS, max_size=12).map("".join), st.text(max_size=40))


@FUZZ
@given(st.dictionaries(st.sampled_from(["NVIDIA_REQUIRE_CUDA", "NVIDIA_REQUIRE_DRIVER", "NVIDIA_REQUIRE_ARCH",
                                        "NVIDIA_REQUIRE_X", "NVIDIA_DISABLE_REQUIRE", "NVIDIA_DISABLE_REQUIRES",
                                        "CUDA_VERSION", "NVIDIA_REQUIRE_"]), REQ_TEXT, max_size=5),
       st.one_of(st.none(), REQ_TEXT), st.one_of(st.none(), REQ_TEXT),
       st.sampled_from(["legacy", "csv", "cdi", "jit-cdi"]))  # flags/target files validate the mode first
def test_fuzz_nvidia_require(env: dict, driver: str | None, cuda: str | None, mode: str) -> None:
    from imagelint.matrix.require import Device, evaluate_env

    devices = [Device("Tesla", "9.0"), Device(None, None)]
    only_imagelint_errors(lambda: evaluate_env(env, driver, cuda, devices, mode))


# --- Dockerfiles ---------------------------------------------------------------------------------------------

DF_LINES = st.sampled_from([
    "FROM nvidia/cuda:12.4.1-base-ubuntu22.04", "FROM ${BASE:-x} AS b", "FROM --platform=$X y", "FROM", "ARG BASE=",
    "ENV A=1 B", "ENV NVIDIA_VISIBLE_DEVICES=all", "ENV CUDA_VISIBLE_DEVICES=${X:?err}", 'ENV A="unterminated',
    "RUN <<EOF", "EOF", "RUN <<-'X' cat", "\tX", "COPY --from=b . .", "ONBUILD ONBUILD RUN x", "# escape=`",
    "# syntax=docker/dockerfile:1", "# imagelint ignore=IL302 because", "CMD [\"a\", ", "ENTRYPOINT [\"/e.sh\"]",
    "SHELL [\"/bin/bash\", \"-c\"]", "LABEL a=\"b", "RUN a \\", "\\", "`", "", "WORKDIR ${", "USER 0:0",
    "ENV LD_LIBRARY_PATH=/usr/local/nvidia/lib64:$LD_LIBRARY_PATH", "HEALTHCHECK NONE", "EXPOSE 80/tcp"])


@FUZZ
@given(st.lists(st.one_of(DF_LINES, st.text(max_size=30)), max_size=15))
def test_fuzz_dockerfile(lines: list[str]) -> None:
    from imagelint.static.dockerfile import parse_dockerfile
    from imagelint.static.dockerfile_facts import dockerfile_facts

    text = "\n".join(lines)
    df = only_imagelint_errors(lambda: parse_dockerfile(text, "Dockerfile"))
    if df is not None:
        only_imagelint_errors(lambda: dockerfile_facts(df))


# --- Kubernetes YAML -----------------------------------------------------------------------------------------

YAML_SNIPPETS = st.sampled_from([
    "apiVersion: v1\nkind: Pod\n", "apiVersion: apps/v1\nkind: Deployment\n", "kind: CronJob\n", "---\n", "...\n",
    "spec:\n  containers:\n  - name: c\n    image: x\n", "  template: {spec: {containers: [{image: 1}]}}\n",
    "    resources: {limits: {nvidia.com/gpu: '2'}, requests: {nvidia.com/gpu: 1}}\n", "    env: [{name: A}]\n",
    "    env: {a: b}\n", "a: &x [1]\nb: *x\n", "c: *nope\n", "\t- tab\n", "key: [unclosed\n", "? complex\n: key\n",
    "!!python/object:os.system ls\n", "!!binary aGVsbG8=\n", "<<: {a: 1}\n", "- - - -\n", "null\n", "'str'\n",
    "  tolerations: [{key: nvidia.com/gpu, operator: Exists}]\n", "  nodeSelector: {a: [b]}\n",
    "  runtimeClassName: {x: 1}\n", "metadata: {annotations: {io.imagelint/ignore: 7}}\n"])


@FUZZ
@given(st.lists(st.one_of(YAML_SNIPPETS, st.text(max_size=20)), max_size=12))
def test_fuzz_kubernetes_yaml(parts: list[str]) -> None:
    from imagelint.static.kubernetes import manifest_facts

    only_imagelint_errors(lambda: manifest_facts("".join(parts), "fuzz.yaml"))


# --- TOML: config, target files, matrix files and overlays ------------------------------------------------------

TOML_VALUES = st.sampled_from(['"x"', "1", "-1", "1.5", "true", "[]", '["IL1", 2]', "{}", '{ a = 1 }', "1979-05-27",
                               '"535.104.05"', '"12.4"', '"H100"', '"amd64"', '"legacy"', '["535.104.05"]', "nan", "inf",
                               '"2026-11-29"', '"imagelint-matrix-overlay"', '"imagelint-matrix"', "[[1], [2]]"])
CONFIG_KEYS = st.sampled_from(["select", "ignore", "severity", "fail-on", "matrix", "matrix-overlays", "matrix-overlay",
                               "inline-ignores", "x", "driver", "gpu", "file", "rule", "image", "reason", "expires"])
TARGET_KEYS = st.sampled_from(["name", "driver", "gpu", "gpus", "count", "cuda", "arch", "toolkit", "device-plugin",
                               "runtime-mode", "labels", "taints", "resources", "compute-capability", "brand", "x"])
MATRIX_KEYS = st.sampled_from(["kind", "schema_version", "data_version", "version", "min_driver", "source",
                               "confidence", "name", "compute_capability", "branch", "x"])


def _toml(tables: st.SearchStrategy[str], keys: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    line = st.tuples(keys, TOML_VALUES).map(lambda kv: f"{kv[0]} = {kv[1]}")
    section = st.tuples(tables, st.lists(line, max_size=5)).map(lambda t: "\n".join([t[0], *t[1]]))
    doc = st.tuples(st.lists(line, max_size=4), st.lists(section, max_size=4)).map(
        lambda t: "\n".join(t[0]) + "\n" + "\n".join(t[1]) + "\n")
    return st.one_of(doc, doc.map(lambda s: s[: len(s) * 2 // 3]), st.text(max_size=60))


@FUZZ
@given(_toml(st.sampled_from(["[target]", "[[ignores]]", "[severity]", "[tool.imagelint]", "[x]", ""]), CONFIG_KEYS))
def test_fuzz_toml_config(text: str) -> None:
    from imagelint.core.config import parse_config

    only_imagelint_errors(lambda: parse_config(text, "fuzz.toml"))


@FUZZ
@given(_toml(st.sampled_from(["[[pool]]", "[[pool.gpus]]", "[pool.labels]", "[[pool.taints]]", "[pool.resources]",
                              "[runtime_classes]", "[[x]]", ""]), TARGET_KEYS))
def test_fuzz_toml_target(text: str) -> None:
    from imagelint.deploytarget.file import parse_target_text

    only_imagelint_errors(lambda: parse_target_text(text, "target.toml", None))


@FUZZ
@given(_toml(st.sampled_from(["[meta]", "[[cuda_releases]]", "[[gpus]]", "[[driver_branches]]", "[[ngc_images]]",
                              "[[toolkit_releases]]", "[[nope]]", ""]), MATRIX_KEYS))
def test_fuzz_toml_matrix_and_overlay(text: str) -> None:
    from imagelint.matrix import load_matrix
    from imagelint.matrix.loader import apply_overlay, matrix_from_text

    only_imagelint_errors(lambda: matrix_from_text(text, "matrix.toml"))
    only_imagelint_errors(lambda: apply_overlay(load_matrix(), text, "overlay.toml"))


# --- tar members through the reader and the merged view ------------------------------------------------------

NAME_PARTS = st.sampled_from(["usr", "local", "cuda", "cuda-12.4", "version.json", "lib", "libcuda.so.1", "..", ".",
                              "", "/", ".wh.x", ".wh..wh..opq", "etc", "ld.so.conf.d", "a.conf", "\udcff", "é"])
MEMBER_NAME = st.lists(NAME_PARTS, min_size=1, max_size=6).map("/".join)


@FUZZ
@given(st.lists(st.tuples(MEMBER_NAME, st.sampled_from([tarfile.REGTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE,
                                                        tarfile.DIRTYPE, tarfile.CHRTYPE, tarfile.FIFOTYPE]),
                          MEMBER_NAME, st.binary(max_size=64)), max_size=20))
def test_fuzz_tar_members_through_reader_and_view(members: list) -> None:
    from imagelint.facts.capture import CAPTURE_SPEC
    from imagelint.layers.filesystem import ImageFilesystem
    from imagelint.layers.reader import extract_layer
    from tests.layers.helpers import blob_layer

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for name, type_, link, data in members:
            ti = tarfile.TarInfo(name or ".")
            ti.type = type_
            ti.linkname = link
            ti.size = len(data) if type_ == tarfile.REGTYPE else 0
            tf.addfile(ti, io.BytesIO(data) if type_ == tarfile.REGTYPE else None)
    x = only_imagelint_errors(lambda: extract_layer(blob_layer(0, buf.getvalue(), "none"), CAPTURE_SPEC))
    if x is None:
        return
    fs = ImageFilesystem.from_extracts([x])
    for name, _, link, _ in members:
        for path in (name, link, name + "/" + link):
            resolved = fs.resolve(path)
            assert resolved is None or not resolved.startswith(("/", "../")), resolved
            fs.read(path)
            fs.lookup(path)
