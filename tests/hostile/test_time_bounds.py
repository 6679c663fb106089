"""Time and memory a CI user can bound: ``--deadline`` for the run, ``--retries`` and ``--timeout``
for each request, whatever a registry (or a daemon) does.

Adversaries: a registry that drips a manifest one byte at a time (never idle long enough for
``--timeout``); one that rate-limits with a long ``Retry-After``; one that serves one layer
slowly while another is missing; a small nested index whose entries all name the same child;
a daemon socket that accepts and never answers.
"""

from __future__ import annotations

import json
import socket
import threading
import uuid

import pytest

from tests.hostile.cli import MiB, assert_unreadable, run_cli
from tests.hostile.scripted_registry import Reply, ScriptedRegistry
from tests.support.hostile_images import image_of, tar_layer
from tests.support.imagebuilder import OCI_INDEX, OCI_MANIFEST, File, canonical_json, sha256

BOUND = dict(timeout=20, rlimit_as=2048 * MiB)  # the harness kills a run that outlives this


@pytest.fixture
def reg():
    server = ScriptedRegistry()
    yield server
    server.stop()


def _home(tmp_path) -> dict[str, str]:
    return {"HOME": str(tmp_path), "DOCKER_CONFIG": str(tmp_path / "none"), "IMAGELINT_NO_CACHE": "1"}


def _serve(reg: ScriptedRegistry, repo: str, layers: int = 1):
    built = image_of([tar_layer([File(f"etc/f{i}", b"x" * (1000 * (layers - i)))]) for i in range(layers)],
                     env={"CUDA_VERSION": "12.4.1"})
    reg.manifest(repo, "t", built.manifest, built.manifest_media_type)
    reg.blob(repo, json.loads(built.manifest)["config"]["digest"], built.config)
    for digest, blob, _, _ in built.layers:
        reg.blob(repo, digest, blob)
    return built


def _inspect(reg: ScriptedRegistry, ref: str, tmp_path, *flags: str):
    return run_cli("inspect", f"registry:{reg.host}/{ref}", "--insecure-registry", reg.host, *flags,
                   env=_home(tmp_path), **BOUND)


def test_a_dripped_manifest_is_bounded_by_the_deadline(reg, tmp_path):
    built = _serve(reg, "a/b")
    reg.routes["/v2/a/b/manifests/t"] = Reply(200, built.manifest, {"Content-Type": OCI_MANIFEST}, drip=0.2)
    run = _inspect(reg, "a/b:t", tmp_path, "--deadline", "2", "--timeout", "5")
    assert_unreadable(run, "deadline", "manifest")
    # Counted, not timed: the run gave up while the manifest was still arriving (one byte per 0.2 s).
    assert reg.dripped.get("/v2/a/b/manifests/t", 0) < len(built.manifest) // 2


def test_a_long_retry_after_is_not_waited_for(reg, tmp_path):
    _serve(reg, "a/b")
    reg.routes["/v2/a/b/manifests/t"] = Reply(429, b'{"errors":[{"code":"TOOMANYREQUESTS","message":"slow down"}]}',
                                              {"Content-Type": "application/json", "Retry-After": "30"})
    run = _inspect(reg, "a/b:t", tmp_path, "--timeout", "3", "--retries", "5")
    assert_unreadable(run, "429", "Retry-After")
    # One request: the 30 s Retry-After was not waited out for a retry (the harness's bound is 20 s).
    assert sum(1 for p, _ in reg.seen if p.endswith("/manifests/t")) == 1


def test_retries_bound_what_a_rate_limiting_registry_costs(reg, tmp_path):
    _serve(reg, "a/b")
    reg.routes["/v2/a/b/manifests/t"] = Reply(429, b"{}", {"Retry-After": "1"})
    run = _inspect(reg, "a/b:t", tmp_path, "--timeout", "3", "--retries", "1")
    assert_unreadable(run, "429")
    assert sum(1 for p, _ in reg.seen if p.endswith("/manifests/t")) == 2


def test_a_missing_layer_is_reported_at_once_while_a_sibling_drips(reg, tmp_path):
    built = _serve(reg, "a/b", layers=2)
    slow, missing = built.layers[0][0], built.layers[1][0]
    reg.routes[f"/v2/a/b/blobs/{slow}"] = Reply(200, built.layers[0][1], {}, drip=0.05)  # ~60 s to send
    del reg.routes[f"/v2/a/b/blobs/{missing}"]
    run = _inspect(reg, "a/b:t", tmp_path, "--timeout", "5", "--retries", "0")
    assert_unreadable(run, "404")
    # At once: the run ended while its sibling was still dripping (not after reading it whole).
    assert reg.dripped.get(f"/v2/a/b/blobs/{slow}", 0) < len(built.layers[0][1]) // 2


def test_a_nested_index_naming_one_child_many_times_is_fetched_once_per_digest(reg, tmp_path):
    built = _serve(reg, "a/b")
    reg.manifest("a/b", built.digest, built.manifest, OCI_MANIFEST)
    child = {"mediaType": OCI_MANIFEST, "digest": built.digest, "size": len(built.manifest),
             "platform": {"os": "linux", "architecture": "amd64"}}
    level = canonical_json({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": [child]})
    reg.manifest("a/b", sha256(level), level, OCI_INDEX)
    for _ in range(3):  # three levels, each naming the one below 60 times: 60^3 = 216,000 without memo
        entry = {"mediaType": OCI_INDEX, "digest": sha256(level), "size": len(level)}
        level = canonical_json({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": [entry] * 60})
        reg.manifest("a/b", sha256(level), level, OCI_INDEX)
    reg.manifest("a/b", "t", level, OCI_INDEX)
    run = _inspect(reg, "a/b:t", tmp_path, "--timeout", "5")
    assert_unreadable(run, "index", "entries")
    assert len(reg.seen) < 20, len(reg.seen)


def test_a_daemon_that_never_answers_is_bounded_by_the_deadline(tmp_path):
    path = tmp_path / "docker.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])  # accept, read nothing, answer nothing
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        run = run_cli("inspect", f"docker:hostile/{uuid.uuid4().hex[:6]}:1", "--deadline", "2", "--timeout", "60",
                      env={**_home(tmp_path), "DOCKER_HOST": f"unix://{path}"}, **BOUND)
        assert_unreadable(run, "deadline")
        # Ended through the main thread (SIGALRM raised DeadlineExceeded inside the blocked read),
        # not by the watchdog's backstop, which ends the process without unwinding it.
        assert "reached its deadline" in run.error_line() and "did not finish" not in run.stderr
    finally:
        stop.set()
        thread.join()
        for s in held:
            s.close()
        server.close()


@pytest.mark.parametrize("value", ["-1", "soon", "nan"])
def test_a_bad_deadline_is_a_usage_error(tmp_path, value):
    run = run_cli("inspect", "oci-dir:/nonexistent", "--deadline", value, env=_home(tmp_path), timeout=20)
    assert run.returncode == 2 and "--deadline" in run.error_line()


def test_a_registry_named_insecure_costs_no_warning_per_request(tls_registry, tmp_path):
    """--insecure-registry turns TLS verification off because the user asked: urllib3's
    InsecureRequestWarning (one per request) is silenced by the program, so the run still ends
    with its one line (here: the registry wants credentials)."""
    run = run_cli("inspect", f"{tls_registry.host}/no/such:1", "--insecure-registry", tls_registry.host,
                  env=_home(tmp_path), **BOUND)
    assert run.returncode == 3 and "Unverified HTTPS request" not in run.stderr
    run.error_line()  # exactly one line on stderr


def test_a_layer_dripping_past_the_deadline_ends_the_run_with_one_line(reg, tmp_path):
    """The layer is read by a worker thread, not the main thread: the run still ends through the
    main thread with its one line (the watchdog adds none), the blob cut short."""
    built = _serve(reg, "a/b")
    digest, blob = built.layers[0][0], built.layers[0][1]
    reg.routes[f"/v2/a/b/blobs/{digest}"] = Reply(200, blob, {}, drip=0.05)
    run = _inspect(reg, "a/b:t", tmp_path, "--deadline", "2", "--timeout", "60")
    assert_unreadable(run, "deadline")  # exactly one line on stderr, exit 3
    assert "did not finish" not in run.stderr
    assert reg.dripped.get(f"/v2/a/b/blobs/{digest}", 0) < len(blob) // 2
