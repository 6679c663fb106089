from __future__ import annotations

import subprocess

import pytest
from typer.testing import CliRunner

from imagelint.cli import app
from imagelint.deploytarget.file import load_target_file
from tests.deploytarget.conftest import TOKEN

runner = CliRunner()


def test_show_from_flags(matrix):
    result = runner.invoke(app, ["target", "show", "--driver", "535.104.05", "--driver", "550.54.15", "--gpu", "H100", "--toolkit", "1.17.3"])
    assert result.exit_code == 0, result.output
    assert "pool driver-535.104.05" in result.output and "pool driver-550.54.15" in result.output
    assert "driver        535.104.05 (CUDA 12.2)" in result.output
    assert "gpu           H100, sm 9.0" in result.output and "toolkit       1.17.3" in result.output


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--gpu", "H10O"], "imagelint: error: --gpu: unknown GPU 'H10O'; did you mean"),
        (["--driver", "535.1040.05.1"], "imagelint: error: --driver: '535.1040.05.1' is not a driver version"),
        (["--context", "prod"], "imagelint: error: --context/--kubeconfig need --cluster"),
    ],
)
def test_show_bad_flags_exit_2_with_one_line(matrix, args, fragment):
    result = runner.invoke(app, ["target", "show", *args])
    assert result.exit_code == 2
    assert result.output.strip().startswith(fragment) and len(result.output.strip().splitlines()) == 1


def test_bad_target_file_exits_2_with_its_line(tmp_path, matrix):
    path = tmp_path / "t.toml"
    path.write_text("[[pool]]\nname = 'a'\ndriver = 'five'\n")
    result = runner.invoke(app, ["target", "show", "--target-file", str(path)])
    assert result.exit_code == 2
    assert f"imagelint: error: {path}:3: pool 1: driver: 'five' is not a driver version" in result.output


def test_snapshot_from_cluster_then_show_from_file(fakekube, kubeconfig, tmp_path, matrix):
    result = runner.invoke(app, ["target", "snapshot", "--cluster", "--kubeconfig", str(kubeconfig)])
    assert result.exit_code == 0, result.output
    assert TOKEN not in result.output
    snapshot = tmp_path / "snapshot.toml"
    snapshot.write_text(result.output)
    assert {p.node_count for p in load_target_file(str(snapshot), matrix).pools} == {1, 2}
    shown = runner.invoke(app, ["target", "show", "--target-file", str(snapshot)])
    assert shown.exit_code == 0 and "pool t4-pool (2 nodes" in shown.output


def test_snapshot_needs_something():
    result = runner.invoke(app, ["target", "snapshot"])
    assert result.exit_code == 2 and "nothing to snapshot" in result.output


def test_console_script_cluster_errors_exit_3_without_the_token(fakekube, tmp_path):
    kubeconfig = fakekube.write_kubeconfig(tmp_path / "kc", token="wrong-" + TOKEN)
    done = subprocess.run(
        ["imagelint", "target", "snapshot", "--cluster", "--kubeconfig", str(kubeconfig)],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 3
    assert done.stderr.strip() == f"imagelint: error: cluster {fakekube.url}: listing nodes: 401 Unauthorized (the kubeconfig's credentials were rejected)"
    assert TOKEN not in done.stdout + done.stderr and done.stdout == ""
