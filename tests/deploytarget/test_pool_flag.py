"""--pool: one pool per flag (no product), compute capabilities as people write them, --platform linux."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from imagelint.errors import UsageError
from imagelint.image import Platform
from imagelint.deploytarget.options import TargetOptions, build_target, pool_from_spec
from imagelint.deploytarget.values import parse_compute_capability

from tests.rules.helpers import matrix

ROOT = Path(__file__).resolve().parents[2]


def gpus_by_pool(target) -> dict[str, list[str]]:
    return {p.name: [g.product for g in p.gpus] for p in target.pools}


def test_pools_say_exactly_what_each_flag_says():
    t = build_target(TargetOptions(pools=("driver=535.104.05,gpu=T4", "driver=550.54.15,gpu=H100")), matrix())
    assert gpus_by_pool(t) == {"535.104.05/T4": ["T4"], "550.54.15/H100": ["H100"]}
    assert [p.driver for p in t.pools] == ["535.104.05", "550.54.15"]
    assert t.pools[0].gpus[0].compute_capability == "7.5" and t.pools[1].cuda_driver_version == "12.4"


def test_repeated_driver_and_gpu_are_a_product_as_documented():
    t = build_target(TargetOptions(drivers=("535.104.05", "550.54.15"), gpus=("T4", "H100")), matrix())
    assert all(names == ["T4", "H100"] for names in gpus_by_pool(t).values()) and len(t.pools) == 2


def test_pool_keys_and_values():
    p = pool_from_spec("name=infer,driver=550.54.15,gpu=L4,gpu=T4,arch=arm64,toolkit=v1.17.3,runtime-mode=CDI", matrix())
    assert (p.name, p.arch, p.toolkit, p.runtime_mode) == ("infer", "arm64", "1.17.3", "cdi")
    assert [g.product for g in p.gpus] == ["L4", "T4"]
    p = pool_from_spec("driver=535.104.05,compute-capability=sm_90", matrix())
    assert p.gpus[0].compute_capability == "9.0"
    for bad, why in (("driver=535,colour=blue", "unknown key 'colour'"), ("driver", "KEY=VALUE"),
                     ("driver=535,driver=550", "driver given twice"), ("name=x", "says nothing"),
                     ("driver=5x5", "not a driver version"), ("driver=535,gpu=NoSuchGPU", "NoSuchGPU")):
        with pytest.raises(UsageError, match=why):
            pool_from_spec(bad, matrix())


def test_pool_flags_mix_with_driver_pools_but_not_with_loose_overrides():
    t = build_target(TargetOptions(pools=("driver=550.54.15,gpu=H100",), drivers=("535.104.05",), gpus=("T4",)), matrix())
    assert gpus_by_pool(t) == {"550.54.15/H100": ["H100"], "driver-535.104.05": ["T4"]}
    with pytest.raises(UsageError, match="write them inside it"):
        build_target(TargetOptions(pools=("driver=550.54.15",), gpus=("T4",)), matrix())


@pytest.mark.parametrize("text,cc", [("8.0", "8.0"), ("9", "9.0"), ("sm_90", "9.0"), ("SM_86", "8.6"), ("sm_90a", "9.0"),
                                     ("compute_75", "7.5"), ("sm_100", "10.0"), ("sm_120f", "12.0"), ("12", "12.0")])
def test_compute_capability_spellings(text, cc):
    assert parse_compute_capability(text) == cc


@pytest.mark.parametrize("text", ["sm_9", "nine", "9.", "sm_", "123"])
def test_bad_compute_capabilities(text):
    with pytest.raises(UsageError):
        parse_compute_capability(text)


def test_platform_linux_means_linux_amd64():
    assert str(Platform.parse("linux")) == "linux/amd64" and str(Platform.parse("Linux")) == "linux/amd64"
    assert str(Platform.parse("arm64")) == "linux/arm64"


def cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "IMAGELINT_NO_CACHE": "1", "NO_COLOR": "1"}
    return subprocess.run(["imagelint", *args], capture_output=True, text=True, timeout=120, env=env)


def test_as_typed():
    r = cli("target", "show", "--pool", "driver=535.104.05,gpu=T4", "--pool", "driver=550.54.15,gpu=H100")
    assert r.returncode == 0 and "pool 535.104.05/T4" in r.stdout and "pool 550.54.15/H100" in r.stdout, r.stderr
    r = cli("target", "show", "--driver", "535.104.05", "--compute-capability", "9")
    assert r.returncode == 0 and "sm 9.0" in r.stdout, r.stdout + r.stderr
    r = cli("check", f"oci-dir:{ROOT / 'examples' / 'cuda-app'}", "--platform", "linux", "--format", "json",
            "--pool", "driver=550.54.15,gpu=T4", "--pool", "driver=535.104.05,gpu=H100")
    assert r.returncode in (0, 1), r.stderr
    doc = json.loads(r.stdout)
    assert doc["results"][0]["image"]["platform"] == "linux/amd64"
    pools = {f["pool"] for f in doc["results"][0]["findings"] if f["rule"] == "IL101"}
    assert pools == {"535.104.05/H100"}, "only the 535 pool is too old for CUDA 12.4"
