"""A cluster (or its kubeconfig) cannot hang a run, exhaust its memory or break the exit-code contract.

Adversaries, with the real ``kubernetes`` client against tests/support/fakekube.py: an API
server that stalls (``--timeout`` and ``--deadline`` bound it), one whose lists never end,
one whose NodeList is half a gigabyte; exec credential plugins that hang, flood or fail;
kubeconfigs that are not kubeconfigs.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from tests.hostile.cli import MiB, assert_unreadable, run_cli
from tests.support.fakekube import FakeKube
from tests.support.hostile_images import image_of, publish, tar_layer
from tests.support.imagebuilder import File
from tests.deploytarget.conftest import realistic_state

TOKEN = "kube-bounds-t0ken-never-print-" + "7" * 12
BOUND = dict(timeout=30, rlimit_as=2048 * MiB)


@pytest.fixture
def kube(tmp_path):
    k = FakeKube(realistic_state(), tmp_path, TOKEN).start()
    yield k
    k.stop()


@pytest.fixture(scope="module")
def image(tmp_path_factory) -> str:
    built = image_of([tar_layer([File("etc/hello", b"hi\n")])], env={"CUDA_VERSION": "12.4.1"})
    return publish(built, tmp_path_factory.mktemp("img"))["oci-dir"]


def _home(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path), "IMAGELINT_NO_CACHE": "1", "DOCKER_CONFIG": str(tmp_path / "none")}


def _check(image: str, kubeconfig: Path, tmp_path: Path, *flags: str):
    return run_cli("check", image, "--cluster", "--kubeconfig", str(kubeconfig), *flags, env=_home(tmp_path), **BOUND)


def test_a_stalled_api_server_is_bounded_by_timeout(kube, image, tmp_path):
    kube.stall = True
    run = _check(image, kube.write_kubeconfig(tmp_path / "kc"), tmp_path, "--timeout", "2")
    assert_unreadable(run, kube.url, "2s")  # the --timeout of 2 s ended it (the harness's bound is 20 s)


def test_a_stalled_api_server_is_bounded_by_the_deadline(kube, image, tmp_path):
    kube.stall = True
    run = _check(image, kube.write_kubeconfig(tmp_path / "kc"), tmp_path, "--deadline", "2", "--timeout", "60")
    assert_unreadable(run, "deadline")  # --deadline ended it, not the 60 s --timeout


def test_a_list_that_never_ends_is_an_error(kube, image, tmp_path):
    kube.endless_continue = True
    run = _check(image, kube.write_kubeconfig(tmp_path / "kc"), tmp_path, "--timeout", "5")
    assert_unreadable(run, "stopped reading")
    from imagelint.cluster.connection import MAX_LIST_PAGES

    pages = sum(1 for r in kube.requests if "/api/v1/nodes" in r)
    assert pages == MAX_LIST_PAGES, pages  # it followed the continue tokens, and stopped at the bound


def test_a_half_gigabyte_node_list_is_refused_within_a_memory_bound(kube, image, tmp_path):
    kube.huge_nodes_bytes = 512 * MiB
    run = _check(image, kube.write_kubeconfig(tmp_path / "kc"), tmp_path, "--timeout", "10")
    assert_unreadable(run, "larger than")
    assert run.peak_rss_bytes < 400 * MiB, run.peak_rss_bytes // MiB


def _exec_kubeconfig(kube: FakeKube, tmp_path: Path, script: str) -> Path:
    plugin = tmp_path / "kube-login"
    plugin.write_text("#!/bin/sh\n" + script)
    plugin.chmod(plugin.stat().st_mode | stat.S_IXUSR)
    path = kube.write_kubeconfig(tmp_path / "kc")
    doc = json.loads(path.read_text())
    doc["users"][0]["user"] = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": str(plugin),
                                        "interactiveMode": "Never"}}
    path.write_text(json.dumps(doc))
    return path


GOOD_CREDENTIAL = json.dumps({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                              "status": {"token": TOKEN}})


@pytest.mark.parametrize("script,fragment", [
    ("exec sleep 60\n", "no answer within"),
    ("exec cat /dev/zero\n", "bytes of output"),
    (f"echo 'login failed for {TOKEN}' >&2; exit 1\n", "exited with status 1"),
    ("echo '{\"kind\": 1}'\n", "ExecCredential"),
], ids=["hang", "flood", "fail", "garbage"])
def test_exec_credential_plugins_are_bounded_and_named(kube, image, tmp_path, script, fragment):
    run = _check(image, _exec_kubeconfig(kube, tmp_path, script), tmp_path, "--timeout", "2")
    line = assert_unreadable(run, "exec credential plugin", "kube-login", fragment)
    assert "ERROR:root" not in run.stderr and TOKEN not in run.output, line
    assert run.peak_rss_bytes < 400 * MiB  # and the 60 s sleep was cut by --timeout 2 (the harness's bound is 20 s)


def test_a_working_exec_plugin_is_used(kube, image, tmp_path):
    run = _check(image, _exec_kubeconfig(kube, tmp_path, f"echo '{GOOD_CREDENTIAL}'\n"), tmp_path, "--timeout", "5")
    assert run.returncode in (0, 1), run.stderr
    assert "/api/v1/nodes" in kube.requests and TOKEN not in run.output


@pytest.mark.parametrize("text", ["[[[ not yaml", "- a\n- b\n", "contexts: 5\ncurrent-context: x\n",
                                  "apiVersion: v1\nkind: Config\ncurrent-context: c\ncontexts: [c]\n", "\x00\x01\x02garbage"],
                         ids=["not-yaml", "a-list", "scalar-contexts", "string-context", "binary"])
def test_a_garbage_kubeconfig_is_one_line_not_an_internal_error(image, tmp_path, text):
    kubeconfig = tmp_path / "kc"
    kubeconfig.write_text(text)
    run = _check(image, kubeconfig, tmp_path)
    assert run.returncode in (2, 3), run.stderr
    line = run.error_line()
    assert "kubeconfig" in line and "internal error" not in line
