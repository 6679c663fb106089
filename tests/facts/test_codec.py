"""The facts codec: a lossless JSON round trip of every kind of ImageFacts, strict on bad data."""

from __future__ import annotations

import collections.abc
import dataclasses
import json
import types
import typing
from pathlib import Path
from types import MappingProxyType

import pytest

from imagelint.facts.codec import decode, encode, field_type
from imagelint.facts.model import BaseImageFacts, GpuCodeObject, GpuFacts, ImageFacts, Provenance
from imagelint.core.inspect import inspect_reference
from imagelint.sources import SourceOptions
from tests.rules.helpers import compat_lib, facts, setting

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "cuda-app"

MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: trainer, namespace: ml}
spec:
  template:
    spec:
      runtimeClassName: nvidia
      nodeSelector: {nvidia.com/gpu.product: Tesla-T4}
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - {key: nvidia.com/gpu.count, operator: Gt, values: ["1"]}
              - {key: kubernetes.io/arch, operator: In, values: [amd64, arm64]}
      tolerations:
      - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
      containers:
      - name: main
        image: nvcr.io/nvidia/pytorch:24.05-py3
        command: ["python", "train.py", "--gpu-id", "1"]
        env: [{name: CUDA_VISIBLE_DEVICES, value: "0"}]
        resources:
          limits: {nvidia.com/gpu: 2}
"""


def _round_trip(f: ImageFacts) -> ImageFacts:
    return decode(ImageFacts, json.loads(json.dumps(encode(f))))


def _assert_same(a: object, b: object, where: str = "facts") -> None:
    """Equal, and of the same types all the way down (a list is not a tuple, a dict not a mappingproxy)."""
    assert type(a) is type(b), f"{where}: {type(a).__name__} != {type(b).__name__}"
    if dataclasses.is_dataclass(a):
        for f in dataclasses.fields(a):
            _assert_same(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
    elif isinstance(a, tuple):
        assert len(a) == len(b), where  # type: ignore[arg-type]
        for i, (x, y) in enumerate(zip(a, b)):  # type: ignore[call-overload]
            _assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, collections.abc.Mapping):
        assert dict(a) == dict(b), where  # type: ignore[call-overload]
    else:
        assert a == b, where


def test_a_real_image_round_trips() -> None:
    [f] = inspect_reference(f"oci-dir:{EXAMPLE}", SourceOptions(use_daemon=False), cache=None)
    assert f.gpu.index_settings and f.cuda.versions and f.env, "the example carries real facts"
    _assert_same(f, _round_trip(f))


def test_driver_libraries_with_forward_compat_notes_round_trip() -> None:
    f = facts(driver_libraries=(compat_lib(),), env={"CUDA_VERSION": "12.4.1"})
    assert f.driver_libraries[0].fwd_compat is not None
    _assert_same(f, _round_trip(f))


def test_kubernetes_workload_facts_round_trip(tmp_path) -> None:
    from imagelint.core.lint import read_static

    path = tmp_path / "deploy.yaml"
    path.write_text(MANIFEST)
    static = read_static(str(path))
    [f] = static.facts
    w = f.workload
    assert w is not None and w.affinity_terms and w.tolerations and dict(w.node_selector) and w.resources
    assert f.gpu.index_settings, "the --gpu-id flag is a fact"
    _assert_same(f, _round_trip(f))


def test_gpu_code_base_image_and_fixed_length_tuples_round_trip() -> None:
    prov = Provenance("file", path="app/ds.txt", line=3, layer_index=2, layer_digest="sha256:" + "a" * 64)
    f = ImageFacts(subject="x", kind="image", labels=MappingProxyType({"a": "1"}),
                   gpu=GpuFacts(visible_devices=setting("NVIDIA_VISIBLE_DEVICES", "all"),
                                needs_capabilities=(("video", prov),)),
                   gpu_code=(GpuCodeObject("usr/lib/libk.so", ("sm_80", "sm_90a"), ("compute_90",), prov),),
                   base=BaseImageFacts(name="nvidia/cuda:12.4.1-runtime-ubuntu22.04", provenance=(prov,)),
                   entrypoint=("/bin/sh", "-c"), cmd=None, gpu_code_read=False, complete=False)
    _assert_same(f, _round_trip(f))


def _leaf_types(tp: object, seen: set[type]) -> typing.Iterator[object]:
    """Every type the model's hints mention, walking into dataclasses and generics."""
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        if tp in seen:
            return
        seen.add(tp)
        for f in dataclasses.fields(tp):  # resolved as the codec resolves them (static-input types included)
            yield from _leaf_types(field_type(tp, f.name), seen)
        return
    args = typing.get_args(tp)
    if args:
        yield typing.get_origin(tp)
        for a in args:
            if a is not Ellipsis:
                yield from _leaf_types(a, seen)
    else:
        yield tp


def test_every_type_in_the_model_is_one_the_codec_handles() -> None:
    """A new field of a type the codec does not know fails here, not as a silent cache miss."""
    handled = {str, int, float, bool, type(None), typing.Any, tuple, typing.Union, types.UnionType,
               collections.abc.Mapping}
    seen: set[type] = set()
    unknown = {t for t in _leaf_types(ImageFacts, seen) if t not in handled}
    assert not unknown, unknown
    assert len(seen) >= 15, "the walk reached the nested models"


@pytest.mark.parametrize(
    "mutate",
    [
        lambda d: d.update(kind=3),                                   # wrong scalar type
        lambda d: d.update(env={"name": "A"}),                        # object where an array belongs
        lambda d: d.update(surprise=1),                               # a field the model has not
        lambda d: d.pop("subject"),                                   # a required field missing
        lambda d: d["cuda"].update(versions=[{"version": "12.4"}]),   # nested: provenance missing
        lambda d: d.update(complete=1),                               # 1 is not a bool
        lambda d: d["gpu"].update(needs_capabilities=[["video"]]),    # fixed-length tuple too short
        lambda d: d.update(labels=["a"]),                             # array where a mapping belongs
    ],
)
def test_data_that_does_not_fit_the_model_is_refused(mutate) -> None:  # type: ignore[no-untyped-def]
    data = encode(facts(env={"CUDA_VERSION": "12.4.1"}, driver_libraries=(compat_lib(),)))
    mutate(data)
    with pytest.raises(ValueError):
        decode(ImageFacts, data)


def test_what_the_codec_cannot_encode_is_an_error() -> None:
    with pytest.raises(TypeError):
        encode(ImageFacts(subject="x", kind="image", warnings=({"a set"},)))  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        encode(ImageFacts(subject="x", kind="image", labels=MappingProxyType({1: "a"})))  # type: ignore[dict-item]
    with pytest.raises(TypeError):
        encode(object())
