"""End to end: the shipped example, and the same image through every on-disk format."""

from __future__ import annotations

import filecmp
import subprocess
import sys
from pathlib import Path

import pytest

from examples.build_example import build_image
from imagelint.core.inspect import inspect_reference
from imagelint.report.facts import facts_to_json
from imagelint.sources import SourceOptions
from tests.facts.helpers import facts_for

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "cuda-app"


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_example_rebuilds_byte_identical(tmp_path: Path) -> None:
    out = tmp_path / "cuda-app"
    subprocess.run([sys.executable, str(ROOT / "examples" / "build_example.py"), str(out)], check=True, capture_output=True)
    assert _tree(out) == _tree(EXAMPLE)
    _, mismatch, errors = filecmp.cmpfiles(out, EXAMPLE, _tree(EXAMPLE), shallow=False)
    assert mismatch == [] and errors == []
    assert sum(p.stat().st_size for p in EXAMPLE.rglob("*") if p.is_file()) < 64 * 1024


def test_example_facts() -> None:
    [facts] = inspect_reference(f"oci-dir:{EXAMPLE}", SourceOptions(use_daemon=False))
    toolkit = [v for v in facts.cuda.versions if v.source == "version.json" and v.component is None]
    assert [v.version for v in toolkit] == ["12.4.1"]
    assert toolkit[0].provenance.via == "usr/local/cuda/version.json"
    [compat] = [d for d in facts.driver_libraries if not d.is_symlink]
    assert (compat.path, compat.role, compat.version) == ("usr/local/cuda-12.4/compat/libcuda.so.550.54.15", "compat", "550.54.15")
    assert compat.fwd_compat.cuda_version == "12.4" and 550 in compat.fwd_compat.driver_branches
    from examples.build_example import (
        CONFIG_TXT,  # the line of gpu-id=1 comes from the source, not a constant
    )

    expected_line = CONFIG_TXT.decode().splitlines().index("gpu-id=1") + 1
    [gid] = [s for s in facts.gpu.index_settings if s.kind == "gpu-id" and s.value == "1"]
    assert (gid.provenance.path, gid.provenance.line, gid.indices, gid.referenced) == ("app/config.txt", expected_line, (1,), True)
    assert ("video", "app/entrypoint.sh") in [(c, p.path) for c, p in facts.gpu.needs_capabilities]
    assert facts.base.name == "docker.io/nvidia/cuda:12.4.1-base-ubuntu22.04"


@pytest.mark.parametrize("fmt", ["oci-dir", "docker-archive", "docker-archive-oci"])
def test_same_facts_through_every_format(tmp_path: Path, fmt: str) -> None:
    spec = build_image()
    facts = facts_for(tmp_path, spec, fmt)
    doc = facts_to_json(facts)
    reference = facts_to_json(facts_for(tmp_path / "ref", spec, "oci-dir")) if fmt != "oci-dir" else doc
    for key in ("cuda", "driver_libraries", "loader", "gpu", "env"):
        assert doc[key] == reference[key], key
    assert len(doc["driver_libraries"]) == 3 and doc["cuda"]["versions"][1]["version"] == "12.4.1"
