"""The facts cache: a warm run on an image already seen builds no filesystem, and anything that
could change the facts (config, layers, capture, limits, imagelint's fact code) is a miss."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import imagelint
from imagelint.core.inspect import inspect_reference
from imagelint.facts import cache as facts_cache
from imagelint.facts.capture import CAPTURE_SPEC_WITHOUT_GPU_CODE
from imagelint.layers import reader
from imagelint.layers.cache import LayerCache
from imagelint.layers.limits import ReadLimits
from imagelint.layers.captures import CAPTURE_STANDARD
from imagelint.sources import SourceOptions, open_images
from tests.support.imagebuilder import File, ImageSpec, Symlink, write_oci_layout

LAYERS = [
    [File("usr/local/cuda-12.4/version.json", b'{"cuda":{"version":"12.4.1"}}'), Symlink("usr/local/cuda", "cuda-12.4"),
     File("etc/ld.so.conf.d/cuda.conf", b"/usr/local/cuda/lib64\n")],
    [File("usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05", b"\x7fELF" + bytes(60)),
     File("app/run.sh", b"#!/bin/sh\nexport CUDA_VISIBLE_DEVICES=1\nexec python3 /app/main.py\n", mode=0o755)],
]


def _layout(tmp: Path, env: dict[str, str] | None = None) -> Path:
    spec = ImageSpec(layers=LAYERS, env=env or {"CUDA_VERSION": "12.4.1"}, entrypoint=["/app/run.sh"])
    built = spec.build()
    return write_oci_layout(tmp, {"a": built, "b": built})


class _Reads:
    """Counts filesystem builds (each one reads every layer, through the layer cache or not)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = reader.read_image_filesystem

        def counting(*a, **k):  # type: ignore[no-untyped-def]
            self.count += 1
            return real(*a, **k)

        monkeypatch.setattr(reader, "read_image_filesystem", counting)


def _inspect(ref: str, store: LayerCache, **kw):  # type: ignore[no-untyped-def]
    options = SourceOptions(use_daemon=False, **kw.pop("options", {}))
    [facts] = inspect_reference(ref, options, cache=store, **kw)
    return facts


def test_a_warm_run_builds_no_filesystem_and_gives_the_same_facts(tmp_path, monkeypatch) -> None:
    layout, store, reads = _layout(tmp_path / "img"), LayerCache(tmp_path / "cache"), _Reads(monkeypatch)
    cold = _inspect(f"oci-dir:{layout}:a", store)
    assert reads.count == 1 and cold.driver_libraries and cold.gpu.index_settings
    warm = _inspect(f"oci-dir:{layout}:a", store)
    assert reads.count == 1, "warm: facts from the cache, no layer read"
    assert warm == cold


def test_the_same_image_under_another_name_is_a_hit_about_that_name(tmp_path, monkeypatch) -> None:
    layout, store, reads = _layout(tmp_path / "img"), LayerCache(tmp_path / "cache"), _Reads(monkeypatch)
    a = _inspect(f"oci-dir:{layout}:a", store)
    b = _inspect(f"oci-dir:{layout}:b", store)
    assert reads.count == 1
    assert b.subject == f"oci-dir:{layout}:b" != a.subject
    assert dataclasses.replace(b, subject=a.subject) == a


def test_another_config_on_the_same_layers_is_a_miss(tmp_path, monkeypatch) -> None:
    store, reads = LayerCache(tmp_path / "cache"), _Reads(monkeypatch)
    one = _inspect(f"oci-dir:{_layout(tmp_path / 'one')}:a", store)
    two = _inspect(f"oci-dir:{_layout(tmp_path / 'two', {'CUDA_VERSION': '12.4.0'})}:a", store)
    assert reads.count == 2
    assert one.cuda.cuda_version_env.value == "12.4.1" and two.cuda.cuda_version_env.value == "12.4.0"


def test_capture_and_limits_are_part_of_the_key(tmp_path, monkeypatch) -> None:
    layout, store, reads = _layout(tmp_path / "img"), LayerCache(tmp_path / "cache"), _Reads(monkeypatch)
    ref = f"oci-dir:{layout}:a"
    with_code = _inspect(ref, store)
    without = _inspect(ref, store, capture=CAPTURE_SPEC_WITHOUT_GPU_CODE)
    assert reads.count == 2 and with_code.gpu_code_read and not without.gpu_code_read
    _inspect(ref, store, options={"limits": ReadLimits(max_layer_inflated_bytes=1 << 30)})
    assert reads.count == 3
    assert _inspect(ref, store, capture=CAPTURE_SPEC_WITHOUT_GPU_CODE) == without and reads.count == 3, "each variant is then a hit"


def test_a_corrupt_or_foreign_entry_is_a_miss_and_is_rewritten(tmp_path, monkeypatch) -> None:
    layout, store, reads = _layout(tmp_path / "img"), LayerCache(tmp_path / "cache"), _Reads(monkeypatch)
    ref = f"oci-dir:{layout}:a"
    cold = _inspect(ref, store)
    [image] = open_images(ref, SourceOptions(use_daemon=False))
    key = facts_cache.facts_key(image, CAPTURE_STANDARD, SourceOptions().limits)
    assert key is not None
    entry = facts_cache._entry(key)
    for bad in (b"not json", b'{"format": "imagelint-facts/1", "key": "other", "facts": {}}',
                b'{"format": "imagelint-facts/1", "key": "%s", "facts": {"subject": 1}}' % key.encode()):
        store.put(entry, bad)  # a well-formed cache file whose payload is wrong
        assert _inspect(ref, store) == cold
    assert reads.count == 4
    assert _inspect(ref, store) == cold and reads.count == 4, "the bad entry was replaced"


def test_no_cache_means_no_facts_entry(tmp_path, monkeypatch) -> None:
    layout, reads = _layout(tmp_path / "img"), _Reads(monkeypatch)
    for _ in range(2):
        _inspect(f"oci-dir:{layout}:a", None)  # type: ignore[arg-type]
    assert reads.count == 2 and not (tmp_path / "cache").exists()


def test_the_code_fingerprint_covers_every_module_that_derives_facts() -> None:
    root = Path(imagelint.__file__).parent
    sources = {p.relative_to(root).as_posix() for p in facts_cache.fact_sources()}
    expected = {p.relative_to(root).as_posix() for d in ("facts", "layers") for p in (root / d).glob("*.py")}
    assert expected <= sources and "image.py" in sources
    assert {"facts/collect.py", "facts/cuda.py", "facts/codec.py", "layers/reader.py"} <= sources
    assert facts_cache.code_fingerprint() == facts_cache.code_fingerprint()


def test_the_fingerprint_changes_with_the_code(monkeypatch) -> None:
    before = facts_cache.code_fingerprint()
    real = Path.read_bytes

    def edited(self: Path) -> bytes:
        data = real(self)
        return data + b"\n# edited\n" if self.name == "cuda.py" and self.parent.name == "facts" else data

    facts_cache.code_fingerprint.cache_clear()
    monkeypatch.setattr(Path, "read_bytes", edited)
    try:
        assert facts_cache.code_fingerprint() != before
    finally:
        monkeypatch.undo()
        facts_cache.code_fingerprint.cache_clear()
    assert facts_cache.code_fingerprint() == before


def test_secret_env_values_are_never_written_and_findings_do_not_change(tmp_path, monkeypatch) -> None:
    from imagelint.core.config import Config
    from imagelint.core.engine import run_rules
    from tests.rules.helpers import matrix, pool, target

    secret = "s3cret-" + tmp_path.name[-8:]
    spec = ImageSpec(layers=LAYERS, env={"CUDA_VERSION": "12.4.1", "HF_TOKEN": secret, "CUDA_VISIBLE_DEVICES": "3"},
                     labels={"note": f"token {secret}"}, entrypoint=["/app/run.sh"])
    layout = write_oci_layout(tmp_path / "img", {"a": spec.build()})
    store, reads = LayerCache(tmp_path / "cache"), _Reads(monkeypatch)
    cold = _inspect(f"oci-dir:{layout}:a", store)
    warm = _inspect(f"oci-dir:{layout}:a", store)
    assert reads.count == 1
    # The cached facts are the facts (masked on disk, restored from the image's own env on read).
    assert warm == cold and warm.env_setting("HF_TOKEN").value == secret
    assert warm.labels["note"] == f"token {secret}"
    written = b"".join(p.read_bytes() for p in (tmp_path / "cache").rglob("*") if p.is_file())
    assert secret.encode() not in written and b"HF_TOKEN" in written
    t = target(pool(driver="535.104.05", gpus=("T4",)))
    findings = [run_rules(f, t, matrix(), Config()).findings for f in (cold, warm)]
    assert findings[0] and findings[0] == findings[1]
