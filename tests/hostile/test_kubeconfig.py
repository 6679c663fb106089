"""A kubeconfig is untrusted input: its exec plugin's words and env never reach output, its
shape cannot crash a run, and loading it leaves the kubernetes client's module as it was."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from tests.hostile.cli import MiB, run_cli
from tests.hostile.test_cluster_bounds import BOUND, TOKEN, _home, image, kube  # noqa: F401 (fixtures)

SECRET = "oidc-client-secret-s3cr3t"  # short runs of token characters: the old filter let them through


def _kubeconfig_with_plugin(kube, tmp_path: Path, script: str, env: list[dict[str, str]] | None = None) -> Path:
    plugin = tmp_path / "oidc-login"
    plugin.write_text("#!/bin/sh\n" + script)
    plugin.chmod(plugin.stat().st_mode | stat.S_IXUSR)
    path = kube.write_kubeconfig(tmp_path / "kc")
    doc = json.loads(path.read_text())
    exec_section: dict[str, object] = {"apiVersion": "client.authentication.k8s.io/v1", "command": str(plugin),
                                       "interactiveMode": "Never"}
    if env:
        exec_section["env"] = env
    doc["users"][0]["user"] = {"exec": exec_section}
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("script", [
    f"echo 'error: invalid_client client_secret={SECRET}' >&2; exit 1\n",
    'echo "token endpoint refused: $OIDC_CLIENT_SECRET" >&2; exit 2\n',
    f"echo 'client_secret {SECRET}' >&2; exec sleep 60\n",
], ids=["stderr-echo", "env-echo", "stderr-then-hang"])
def test_a_failing_exec_plugin_never_shows_its_stderr_or_env(kube, image, tmp_path, script):
    env = [{"name": "OIDC_CLIENT_SECRET", "value": SECRET}]
    kubeconfig = _kubeconfig_with_plugin(kube, tmp_path, script, env)
    run = run_cli("check", image, "--cluster", "--kubeconfig", str(kubeconfig), "--timeout", "2",
                  env=_home(tmp_path), **BOUND)
    assert run.returncode == 3, run.stderr
    assert "exec credential plugin" in run.error_line() and "oidc-login" in run.error_line()
    assert SECRET not in run.output and SECRET not in run.stderr
    assert "Traceback" not in run.stderr and "ERROR:root" not in run.stderr


def test_a_deeply_nested_kubeconfig_is_one_line(image, tmp_path):
    kubeconfig = tmp_path / "kc"
    kubeconfig.write_text("a: " + "[" * 50_000 + "]" * 50_000 + "\n")
    run = run_cli("check", image, "--cluster", "--kubeconfig", str(kubeconfig), env=_home(tmp_path), **BOUND)
    assert run.returncode == 3, run.stderr
    line = run.error_line()
    assert "kubeconfig" in line and "internal error" not in line and "Recursion" not in run.stderr


def test_an_oversized_kubeconfig_is_refused_before_it_is_parsed(image, tmp_path):
    kubeconfig = tmp_path / "kc"
    kubeconfig.write_text("# padding\n" * (1024 * 1024))  # 10 MiB of comments
    run = run_cli("check", image, "--cluster", "--kubeconfig", str(kubeconfig), env=_home(tmp_path),
                  timeout=30, rlimit_as=1024 * MiB)
    assert run.returncode == 3 and "larger than" in run.error_line(), run.stderr


def test_loading_a_kubeconfig_leaves_the_client_module_unpatched(kube, tmp_path):
    from kubernetes.config import kube_config
    from kubernetes.config.exec_provider import ExecProvider

    from imagelint.cluster.kubeconfig import load_client_configuration

    good = json.dumps({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                       "status": {"token": TOKEN}})
    kubeconfig = _kubeconfig_with_plugin(kube, tmp_path, f"echo '{good}'\n")
    loaded = load_client_configuration(None, str(kubeconfig), timeout=5)
    assert f"Bearer {TOKEN}" in loaded.configuration.api_key.values()
    assert kube_config.ExecProvider is ExecProvider
    import logging

    assert logging.root.manager.disable == logging.NOTSET
