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
        if not forbidden and not switches and _comparable(kube, args):
            _same_from_dump(kube, args, result.exit_code, result.stdout, tmp_path)
        return DoctorRun(result.exit_code, result.stdout, result.stderr if hasattr(result, "stderr") else "", kube)

    yield run
    for kube in started:
        kube.stop()


def _comparable(kube: FakeKube, args: tuple[str, ...]) -> bool:
    """A run whose every input a dump can hold (no RBAC, no fault switch, no image reads)."""
    switched = (kube.missing or kube.stall or kube.stall_logs or kube.oversize_logs or kube.raw or kube.huge_nodes_bytes
                or kube.role_namespace or kube.broken_continue or kube.endless_continue)
    return not switched and not {"--images", "--output", "-o", "--deadline"} & set(args)


def finding_lines(output: str) -> list[str]:
    """The findings of a report, text or JSON: what must be the same live and from a dump."""
    if output.lstrip().startswith("{"):
        return [json.dumps(f, sort_keys=True) for s in json.loads(output)["stages"] for f in s["findings"]]
    lines = output.splitlines()
    found = []
    for i, line in enumerate(lines):
        head = line.startswith("  ") and not line.startswith("   ") and i + 1 < len(lines) and lines[i + 1].startswith("    ")
        if head or line.startswith("    "):
            found.append(line)
        elif line.startswith("stage "):
            found.append(line.split(":")[0])
    return found


def _same_from_dump(kube: FakeKube, args: tuple[str, ...], exit_code: int, output: str, tmp_path: Path) -> None:
    """Every scenario run live is run again from a dump of the same objects: the same findings."""
    from imagelint.cli import app
    from tests.support.dumps import write_doctor_dump

    _same_from_dump.count = getattr(_same_from_dump, "count", 0) + 1
    root = write_doctor_dump(kube, tmp_path / f"dump-{_same_from_dump.count}")
    result = CliRunner().invoke(app, ["doctor", "--from", str(root), *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert finding_lines(result.stdout) == finding_lines(output), f"live:\n{output}\nfrom the dump:\n{result.stdout}"
    if exit_code == 1 or result.exit_code == 1:
        assert result.exit_code == exit_code, result.stdout
    else:  # no finding: healthy live may be "not all checked" from a dump that lacks a kind, never the reverse
        assert result.exit_code in (exit_code, 5), result.stdout
