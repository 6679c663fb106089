"""'Could not judge' is never silent: unknown CUDA releases, NGC releases, driver branches and an
old matrix all show in text, JSON and SARIF output."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from imagelint.core.check import run_check
from imagelint.core.config import Config
from imagelint.facts.model import CudaVersionEvidence
from imagelint.report import ReportOptions
from imagelint.report.artifacts import SarifArtifacts
from imagelint.report import json as json_report
from imagelint.report import sarif as sarif_report
from imagelint.report import text as text_report
from imagelint.sources import SourceOptions

from tests.rules.helpers import env_prov, facts, file_prov, matrix, of, pool, run, target

ROOT = Path(__file__).resolve().parents[2]


def _render_all(image, t, today=dt.date(2026, 12, 1)) -> dict[str, str]:
    checked = run_check(["img"], SourceOptions(), t, matrix(), Config(), inspector=lambda *_: [image], today=today)
    return {
        "text": text_report.render(checked, ReportOptions()),
        "json": json_report.render(checked, ReportOptions()),
        # Code scanning needs a repository file for image findings: the README stands in.
        "sarif": sarif_report.render(checked, ReportOptions(sarif_artifacts=SarifArtifacts(root=str(ROOT), anchor=str(ROOT / "README.md")))),
    }


def test_cuda_newer_than_the_matrix_is_said_in_every_format():
    image = facts({"CUDA_VERSION": "13.9.0"})
    outputs = _render_all(image, target(pool(driver="595.71.05", gpus=("H100",), runtime_mode="cdi", toolkit="1.20.0")))
    for name, text in outputs.items():
        assert "older than the image" in text and "13.9.0" in text, name
    [il101] = of(run(image, target(pool(driver="595.71.05", gpus=("H100",), runtime_mode="cdi", toolkit="1.20.0"))), "IL101")
    assert il101.severity == "warning" and il101.extra["outcome"] == "minor-version-compat"


def test_cuda_newer_than_the_matrix_on_an_older_major_driver_still_fails_for_certain():
    image = facts({"CUDA_VERSION": "13.9.0"})
    [il101] = of(run(image, target(pool(driver="535.104.05", gpus=("H100",), runtime_mode="cdi", toolkit="1.20.0"))), "IL101")
    assert il101.severity == "error" and "insufficient" in il101.message


def test_unknown_cuda_without_target_is_a_could_not_judge_warning():
    [il101] = of(run(facts({"CUDA_VERSION": "13.9.0"})), "IL101")
    assert il101.severity == "warning" and "could not judge" in il101.message


def test_unknown_ngc_release_is_a_could_not_judge_warning():
    ev = CudaVersionEvidence("29.01", "ngc-env", env_prov("NVIDIA_PYTORCH_VERSION"), "minor", "ngc-pytorch")
    image = facts({}, versions=(ev,))
    [il106] = of(run(image, target(pool(driver="580.95.05", gpus=("H100",)))), "IL106")
    assert il106.severity == "warning" and "could not judge" in il106.message and "29.01" in il106.message
    outputs = _render_all(image, target(pool(driver="580.95.05", gpus=("H100",))))
    assert all("NGC pytorch release 29.01" in text for text in outputs.values())


def test_driver_newer_than_any_known_branch_is_said_in_every_format():
    outputs = _render_all(facts({"CUDA_VERSION": "12.4.1"}), target(pool(driver="999.1", gpus=("H100",))))
    for name, text in outputs.items():
        assert "could not judge driver 999.1" in text, name


def test_major_only_cuda_evidence_is_judged_conservatively():
    ev = CudaVersionEvidence("12", "libcudart", file_prov("usr/local/cuda/lib64/libcudart.so.12"), "major", "cudart")
    image = facts({}, versions=(ev,))
    [il101] = of(run(image, target(pool(driver="535.104.05", gpus=("T4",), runtime_mode="cdi", toolkit="1.18.0"))), "IL101")
    assert il101.extra["outcome"] == "minor-version-compat" and "names only CUDA major 12" in il101.message
    assert not of(run(image, target(pool(driver="580.95.05", gpus=("T4",), runtime_mode="cdi", toolkit="1.18.0"))), "IL101")
    [old] = of(run(image, target(pool(driver="470.57.02", gpus=("T4",), runtime_mode="cdi", toolkit="1.18.0"))), "IL101")
    assert old.severity == "error"


def test_an_old_matrix_is_a_run_notice_in_every_format():
    m = matrix()
    assert m.age_notice(dt.date(2026, 12, 1)) is None
    assert "more than six months" in m.age_notice(dt.date(2027, 7, 1))
    outputs = _render_all(facts({"CUDA_VERSION": "12.4.1"}), target(pool(driver="550.54.15")), today=dt.date(2027, 7, 1))
    for name, text in outputs.items():
        assert "more than six months" in text, name
    assert "more than six months" in json.dumps(json.loads(outputs["sarif"])["runs"][0]["invocations"])
