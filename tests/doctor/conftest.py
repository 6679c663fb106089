from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import pytest
from typer.testing import CliRunner

from tests.support.fakekube import ClusterState, FakeKube

TOKEN = "doctor-test-bearer-token-0123456789abcdef"


@dataclass
class DoctorRun:
    exit_code: int
    output: str
    stderr: str
    kube: FakeKube

    @property
    def lines(self) -> list[str]:
        return self.output.splitlines()

    @property
    def json(self) -> dict:
        return json.loads(self.output)


@pytest.fixture
def run_doctor(tmp_path: Path) -> Iterator[Callable[..., DoctorRun]]:
    """Serve ``state`` on a loopback fakekube and run the real CLI against it."""
    started: list[FakeKube] = []

    def run(state: ClusterState, *args: str, forbidden: tuple[str, ...] = (), kube: FakeKube | None = None,
            **switches: object) -> DoctorRun:
        """``switches``: FakeKube attributes set before the run (``role_namespace="ml"``, ``oversize_logs=...``)."""
        from imagelint.cli import app

        if kube is None:
            kube = FakeKube(state, tmp_path, TOKEN).start()
            started.append(kube)
        kube.forbidden = set(forbidden)
        for name, value in switches.items():
            assert hasattr(kube, name), name
            setattr(kube, name, value)
        config = kube.write_kubeconfig(tmp_path / "kubeconfig")
        result = CliRunner().invoke(app, ["doctor", "--cluster", "--kubeconfig", str(config), *args])
        assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
        return DoctorRun(result.exit_code, result.stdout, result.stderr if hasattr(result, "stderr") else "", kube)

    yield run
    for kube in started:
        kube.stop()
