"""A cache writer and an image that aims at the cache: neither changes a verdict, hangs a run or leaks.

* an image whose secret-looking env values equal fact strings (``CACHE_KEY=cli-flag``,
  ``BUILD_TOKEN=12.4``) gets the same findings cold and warm, and the values are not on disk;
* a layer extract in another layer's slot (copied, or re-keyed) is a miss;
* an entry planted by another user, or writable by others, is a miss (matrix, facts, layers);
* entries that are links to ``/dev/zero`` or FIFOs are misses, not a hang or an OOM;
* ``--cache-dir`` / ``--no-cache`` hold for every cache (the parsed matrix one too);
* a concurrent ``imagelint cache clean`` never breaks a running check.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from tests.hostile.cli import MiB, run_cli
from tests.support.hostile_images import image_of, publish, tar_layer
from tests.support.imagebuilder import File

NOBODY = 65534
FLAGS = ("--driver", "470.57.02", "--gpu", "T4", "--format", "json")


def _env_image(env: dict[str, str]):
    layer = tar_layer([File("entrypoint.sh", b"#!/bin/sh\nexec python app.py --device cuda:1\n")])
    config = {"Env": [f"{k}={v}" for k, v in env.items()], "Entrypoint": ["/entrypoint.sh"]}
    return image_of([layer], config_patch={"config": config})


BASE_ENV = {"CUDA_VERSION": "12.4.1", "NVIDIA_REQUIRE_CUDA": "cuda>=12.4"}
EXPECTED = {"IL101", "IL102", "IL302"}  # driver 470 is too old for 12.4; cuda:1 is a hard-coded index


def _rules(run) -> set[str]:
    assert run.returncode == 1, run.stderr
    doc = json.loads(run.stdout)
    return {f["rule"] for r in doc["results"] for f in r["findings"]}


def _check(ref: str, cache: Path, *extra: str, env: dict[str, str] | None = None):
    return run_cli("check", ref, *FLAGS, "--cache-dir", str(cache), *extra, env=env, timeout=60,
                   rlimit_as=2048 * MiB)


def _files(d: Path) -> list[Path]:
    return sorted(p for p in d.rglob("*") if p.is_file() or p.is_symlink())


@pytest.mark.parametrize("secret", [{"CACHE_KEY": "cli-flag"}, {"BUILD_TOKEN": "12.4"}, {"API_KEY": "gpu-index"},
                                    {"HF_TOKEN": "\ue000e;\ue0000;"}])
def test_secret_env_equal_to_fact_strings_keeps_the_verdict_warm(tmp_path, secret):
    refs = publish(_env_image({**BASE_ENV, **secret}), tmp_path / "img")
    cache = tmp_path / "cache"
    cold, warm = _check(refs["oci-dir"], cache), _check(refs["oci-dir"], cache)
    assert _rules(cold) == _rules(warm) >= EXPECTED
    assert cold.stdout == warm.stdout
    value = next(iter(secret.values())).encode()
    if value != b"12.4":  # 12.4 is also the image's CUDA version, a fact in its own right
        assert not any(value in p.read_bytes() for p in _files(cache)), "a secret env value was written"


def test_a_layer_extract_in_another_layers_slot_is_a_miss(tmp_path):
    from imagelint.layers.cache import LayerCache, caching_extractor
    from imagelint.layers.codec import extract_to_bytes
    from imagelint.layers.reader import extract_layer
    from tests.layers.helpers import built_image, spec_of

    spec = spec_of(("**/version.json", "content", 4096))
    image = built_image([[File("usr/local/cuda/version.json", b'{"cuda":{"version":"12.4.1"}}')],
                         [File("usr/local/cuda/version.json", b'{"cuda":{"version":"11.8.0"}}')]])
    a, b = image.layers
    store = LayerCache(tmp_path / "cache")
    calls: list[str] = []

    def extract(layer, spec, limits):  # type: ignore[no-untyped-def]
        calls.append(layer.digest)
        return extract_layer(layer, spec, limits)

    cached = caching_extractor(store, extract)
    cached(a, spec, None)
    key_a, key_b = LayerCache.key(a.digest, spec), LayerCache.key(b.digest, spec)
    # 1. the whole entry file copied into b's slot
    store._path(key_b).parent.mkdir(parents=True, exist_ok=True)
    store._path(key_b).write_bytes(store._path(key_a).read_bytes())
    got = cached(b, spec, None)
    assert calls == [a.digest, b.digest] and got.digest == b.digest
    assert got.contents["usr/local/cuda/version.json"].endswith(b'"11.8.0"}}')
    # 2. a's extract re-written under b's key (a well-formed entry for the wrong layer)
    store.put(key_b, extract_to_bytes(extract_layer(a, spec, None)))
    got = cached(b, spec, None)
    assert calls == [a.digest, b.digest, b.digest] and got.digest == b.digest


def _edit_matrix_entries(cache: Path, owner: int | None, mode: int | None) -> int:
    """Drop every driver floor from the cached shipped matrix (what would silence IL101)."""
    edited = 0
    for path in (cache / "matrix").glob("matrix-*.ilm"):
        import zlib

        data = path.read_bytes()
        entry = json.loads(data[8:])
        entry["doc"] = {k: v for k, v in entry["doc"].items() if k in ("meta",)}
        body = json.dumps(entry).encode()
        path.write_bytes(data[:4] + zlib.crc32(body).to_bytes(4, "big") + body)
        if owner is not None:
            os.chown(path, owner, owner)
        if mode is not None:
            os.chmod(path, mode)
        edited += 1
    return edited


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to plant a file owned by another user")
@pytest.mark.parametrize("owner,mode", [(NOBODY, None), (None, 0o666)], ids=["other-user", "world-writable"])
def test_a_matrix_entry_planted_by_another_writer_is_a_miss(tmp_path, owner, mode):
    refs = publish(_env_image(BASE_ENV), tmp_path / "img")
    cache = tmp_path / "cache"
    assert _rules(_check(refs["oci-dir"], cache)) >= EXPECTED
    assert _edit_matrix_entries(cache, owner, mode) >= 1
    assert _rules(_check(refs["oci-dir"], cache)) >= EXPECTED


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to plant a file owned by another user")
def test_facts_and_layer_entries_of_another_user_are_misses(tmp_path):
    refs = publish(_env_image(BASE_ENV), tmp_path / "img")
    cache = tmp_path / "cache"
    cold = _check(refs["oci-dir"], cache)
    # Swap in another image's entries (no IL302: no hard-coded index), owned by someone else.
    other = publish(image_of([tar_layer([File("entrypoint.sh", b"#!/bin/sh\nexec app\n")])],
                             config_patch={"config": {"Env": [f"{k}={v}" for k, v in BASE_ENV.items()],
                                                      "Entrypoint": ["/entrypoint.sh"]}}), tmp_path / "other")
    other_cache = tmp_path / "other-cache"
    _check(other["oci-dir"], other_cache)
    mine = [p for p in _files(cache) if p.suffix == ".ilx"]
    theirs = sorted((p for p in _files(other_cache) if p.suffix == ".ilx"), key=lambda p: p.stat().st_size)
    for path in mine:  # every slot gets a foreign entry of the same kind (not bound to its key: miss anyway)
        path.write_bytes(theirs[0].read_bytes())
        os.chown(path, NOBODY, NOBODY)
    assert _check(refs["oci-dir"], cache).stdout == cold.stdout


@pytest.mark.parametrize("kind", ["dev-zero-link", "fifo"])
def test_non_regular_cache_entries_are_misses_not_hangs(tmp_path, kind):
    refs = publish(_env_image(BASE_ENV), tmp_path / "img")
    cache = tmp_path / "cache"
    cold = _check(refs["oci-dir"], cache)
    entries = [p for p in _files(cache) if p.suffix in (".ilx", ".ilm")]
    assert any(p.suffix == ".ilm" for p in entries) and any(p.suffix == ".ilx" for p in entries)
    for path in entries:
        path.unlink()
        if kind == "fifo":
            os.mkfifo(path)
        else:
            path.symlink_to("/dev/zero")
    warm = _check(refs["oci-dir"], cache)
    assert warm.stdout == cold.stdout
    assert warm.seconds < 30 and warm.peak_rss_bytes < 1024 * MiB


def test_cache_dir_and_no_cache_hold_for_the_matrix_cache_too(tmp_path):
    refs = publish(_env_image(BASE_ENV), tmp_path / "img")
    default = tmp_path / "default-cache"
    env = {"IMAGELINT_CACHE_DIR": str(default), "XDG_CACHE_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path)}
    chosen = tmp_path / "chosen"
    assert _rules(_check(refs["oci-dir"], chosen, env=env)) >= EXPECTED
    assert not default.exists() and not (tmp_path / "xdg").exists(), "wrote outside --cache-dir"
    assert list((chosen / "matrix").glob("*.ilm")), "the matrix cache follows --cache-dir"
    nothing = tmp_path / "nothing"
    assert _rules(_check(refs["oci-dir"], nothing, "--no-cache", env=env)) >= EXPECTED
    assert not nothing.exists() and not default.exists(), "--no-cache wrote a cache"
    # --no-cache reads nothing either: a poisoned (world-writable, edited) matrix entry is never looked at
    assert _edit_matrix_entries(chosen, None, None) >= 1
    assert _rules(_check(refs["oci-dir"], chosen, "--no-cache", env=env)) >= EXPECTED


def test_a_concurrent_cache_clean_never_breaks_a_reader_or_writer(tmp_path):
    from imagelint.layers.cache import LayerCache

    store = LayerCache(tmp_path / "cache", max_bytes=64 * 1024)
    stop, errors = threading.Event(), []

    def cleaner() -> None:
        other = LayerCache(tmp_path / "cache")
        while not stop.is_set():
            try:
                other.clean()
            except Exception as exc:  # pragma: no cover - the failure being tested
                errors.append(exc)

    thread = threading.Thread(target=cleaner)
    thread.start()
    try:
        for i in range(3000):
            key = f"{i % 256:02x}" + "ab" * 31
            store.put(key, os.urandom(512))
            store.get(key)
            store.info()
    finally:
        stop.set()
        thread.join()
    assert not errors, errors[:1]
