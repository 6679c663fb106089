from __future__ import annotations

import json
from pathlib import Path

import pytest

from imagelint.core.check import CheckRun
from imagelint.core.config import Config, IgnoreEntry
from imagelint.core.engine import ImageResult

from tests.rules.helpers import facts, file_prov, matrix, pool, run, target

ROOT = Path(__file__).resolve().parents[2]


def make_run(results, t=None, config=None) -> CheckRun:
    m = matrix()
    return CheckRun(results=tuple(results), target=t or target(), config=config or Config(),
                    matrix_version=m.version, matrix_origin=m.origin)


@pytest.fixture(scope="session")
def report_schema():
    return json.loads((ROOT / "docs" / "report-schema.json").read_text())


@pytest.fixture(scope="session")
def sarif_schema():
    return json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())


@pytest.fixture
def busy_run() -> CheckRun:
    """Findings of every severity, a pool, a suppression, a notice, a secret, and an unreadable image."""
    from imagelint.facts.model import GpuIndexSetting

    gpu_id = GpuIndexSetting("gpu-id", "1", (1,), "gpu-id=1", file_prov("app/config.txt", line=3))
    gpu_zero = GpuIndexSetting("gpu-id", "0", (0,), "gpu-id=0", file_prov("app/config.txt", line=9))
    env = {
        "CUDA_VERSION": "12.4.1", "NVIDIA_REQUIRE_CUDA": "cuda>=12.4", "NVIDIA_VISIBLE_DEVICES": "all",
        "NVIDIA_DISABLE_REQUIRE": "1", "CUDA_VISIBLE_DEVICES": "hunter2-secret", "DB_PASSWORD": "hunter2-secret",
        "NVIDIA_DRIVER_CAPABILITIES": "compute,utility",
    }
    cfg = Config(ignores=(IgnoreEntry("IL104", "*", "known, tracked in JIRA-1", None, "imagelint.toml:9"),))
    t = target(pool("t4-pool", driver="470.57.02", runtime_mode="legacy", device_list_strategy=("envvar",)))
    f = facts(env, index_settings=(gpu_id, gpu_zero), subject="oci-dir:app")
    res = run(f, t, config=cfg)
    bad = ImageResult("registry:example.invalid/app:1", error="registry example.invalid: connection refused", error_exit_code=3)
    return make_run([res, bad], t, cfg)
