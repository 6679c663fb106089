"""Issue 39: every boundary where an untrusted JSON document or number enters, fed deep nesting,
non-ASCII digits, huge and non-finite numbers. Each answers with its own one-line error (exit 2
or 3) or reads past the value, never exit 70, a traceback or a hang.

Function-level boundaries are fuzzed with Hypothesis; the ones reached only through a registry,
a helper or the CLI run once per hostile shape through ``main()`` or the console script.
"""

from __future__ import annotations

import base64
import http.server
import json
import os
import tarfile
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from imagelint.errors import ImagelintError, UsageError
from tests.hostile.cli import assert_exit, inspect_api, run_cli, run_main
from tests.support.imagebuilder import File, ImageSpec, RawMember, write_oci_layout

FUZZ = settings(max_examples=int(os.environ.get("IMAGELINT_FUZZ_EXAMPLES", "60")), deadline=None,
                suppress_health_check=list(HealthCheck))
DEEP = b"[" * 60000 + b"]" * 60000

# What an adversary writes where a document or a number is expected.
NUMBERS = st.one_of(
    st.sampled_from(["²", "٣", "¹²", "１", "1e400", "-1e400", "NaN", "Infinity", "-0", "0x10", "1_0", ""]),
    st.integers(4301, 6000).map(lambda n: "9" * n),
    st.text(alphabet="0123456789²³¹٠١٢٣.eE+-", max_size=30),
)
DOCUMENTS = st.one_of(
    st.integers(129, 80000).map(lambda n: "[" * n + "]" * n),
    st.integers(129, 20000).map(lambda n: '{"a":' * n + "1" + "}" * n),
    NUMBERS.map(lambda n: '{"auths": {"r": {"auth": %s}}, "version": %s}' % (n or "0", n or "0")),
    st.sampled_from(['{"a": NaN}', "[1e400]", "[" + "9" * 4400 + "]", '{"a": -Infinity}']),
    st.text(max_size=60),
)


def one_line(exc: BaseException) -> None:
    assert "\n" not in str(exc), str(exc)


# --- documents -------------------------------------------------------------------------------------------


@given(DOCUMENTS)
@FUZZ
def test_cuda_version_json_in_an_image(doc: str) -> None:
    from imagelint.facts.cuda import parse_version_json

    assert isinstance(parse_version_json(doc.encode()), list)  # unreadable: no version from it, never a crash


@given(DOCUMENTS)
@FUZZ
def test_compat_libcuda_note(doc: str) -> None:
    from imagelint.facts.driverlibs import driver_library_table, forward_compat_note

    table = driver_library_table()
    note, problem = forward_compat_note({"elf": 1, "notes": [{"owner": table.note_owner, "section": table.note_section,
                                                              "desc": doc}]}, table)
    assert note is not None or problem is not None or doc.strip() == ""


class _Secrets:
    """A Connection's get_object answering each secret with the payload the test planted."""

    def __init__(self, payloads: dict[str, bytes]) -> None:
        self.payloads = payloads

    def get_object(self, resource: Any, name: str, namespace: str, **_: Any) -> Any:
        data = {".dockerconfigjson": base64.b64encode(self.payloads[name]).decode()}
        return SimpleNamespace(checked=True, object={"type": "kubernetes.io/dockerconfigjson", "data": data}, refused=None)


@given(DOCUMENTS)
@FUZZ
def test_one_tenants_bad_pull_secret_is_skipped_with_a_note(doc: str) -> None:
    from imagelint.cluster.pull_secrets import read_pull_secrets

    good = json.dumps({"auths": {"registry.example": {"username": "u", "password": "p"}}}).encode()
    warnings: list[str] = []
    found = read_pull_secrets(_Secrets({"bad": doc.encode(), "good": good}),  # type: ignore[arg-type]
                              [("tenant-a", "bad"), ("tenant-b", "good")], warnings)
    assert found[("tenant-b", "good")][0].registry == "registry.example"
    assert ("tenant-a", "bad") in found or any("tenant-a/bad" in w for w in warnings)


@given(DOCUMENTS)
@FUZZ
def test_image_documents_and_archive_manifests(doc: str) -> None:
    from imagelint.sources.archive import parse_save_manifest
    from imagelint.sources.manifest import load_json_object

    for read in (lambda: load_json_object(doc.encode(), "manifest"), lambda: parse_save_manifest(doc.encode(), "manifest.json", "x")):
        try:
            read()
        except ImagelintError as exc:
            assert exc.exit_code == 3
            one_line(exc)


@given(DOCUMENTS)
@FUZZ
def test_audit_merge_parts(tmp_path_factory: pytest.TempPathFactory, doc: str) -> None:
    from imagelint.audit.jsonout import read_report

    part = tmp_path_factory.mktemp("part") / "part.json"
    part.write_text(doc)
    with pytest.raises(UsageError) as caught:
        read_report(str(part))
    one_line(caught.value)


@given(DOCUMENTS)
@FUZZ
def test_dockerfile_exec_form(doc: str) -> None:
    from imagelint.static.dockerfile import parse_dockerfile

    try:
        parsed = parse_dockerfile(f"FROM ubuntu\nCMD {doc}\n".replace("\r", ""), "Dockerfile")
    except ImagelintError as exc:
        assert exc.exit_code == 2
        one_line(exc)
        return
    for instruction in parsed.instructions:
        form = instruction.exec_form  # the exec form's items, or None: the shell form, as docker reads it
        assert form is None or all(isinstance(item, str) for item in form)


def test_documents_through_the_cli(tmp_path: Path) -> None:
    (tmp_path / "Dockerfile").write_bytes(b"FROM ubuntu\nCMD " + b"[" * 60000 + b"\n")
    run = run_main("lint", "Dockerfile", cwd=tmp_path)
    assert run.returncode in (0, 1) and "Traceback" not in run.output and "internal error" not in run.output
    assert_exit(run_cli("lint", "-", stdin=DEEP, cwd=tmp_path), 2)
    (tmp_path / "inventory.json").write_bytes(b'{"images":' + DEEP + b"}")
    assert_exit(run_main("audit", "--images", str(tmp_path / "inventory.json"), "--driver", "550.54.15", "--gpu", "T4",
                         "--config-only", cwd=tmp_path), 2, "nested 60001 deep, past the limit of 128")
    (tmp_path / "part.json").write_bytes(DEEP)
    assert_exit(run_main("audit", "merge", str(tmp_path / "part.json"), cwd=tmp_path), 2, "part.json")


# --- a registry, its token server and a credential helper, each answering a deep document ---------------------


@pytest.fixture
def hostile_registry() -> Iterator[tuple[int, dict[str, str]]]:
    mode = {"m": "404"}
    deep_errors = b'{"errors":' + b"[" * 30000 + b"]" * 30000 + b"}"  # inside the 64 KiB error-body cap

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            port = self.server.server_address[1]
            if mode["m"] == "404":
                self._send(404, deep_errors)
            elif self.path.startswith("/token"):
                self._send(200, DEEP)
            else:
                challenge = (f'Bearer realm="http://127.0.0.1:{port}/token",service="x"' if mode["m"] == "token"
                             else 'Basic realm="x"')
                self.send_response(401)
                self.send_header("WWW-Authenticate", challenge)
                self.send_header("Content-Length", "0")
                self.end_headers()

        def _send(self, code: int, body: bytes) -> None:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1], mode
    server.shutdown()


@pytest.mark.parametrize("mode", ["404", "token", "helper"])
def test_registry_error_bodies_token_answers_and_helper_output(tmp_path: Path, hostile_registry: Any, mode: str) -> None:
    port, state = hostile_registry
    state["m"] = mode
    env = {}
    args = ["inspect", f"127.0.0.1:{port}/app/x:1", "--insecure-registry", f"127.0.0.1:{port}", "--retries", "0",
            "--config-only"]
    if mode == "helper":
        bindir = tmp_path / "bin"
        bindir.mkdir()
        helper = bindir / "docker-credential-deep"
        helper.write_text("#!/bin/sh\nprintf '%s' \"$(printf '[%.0s' $(seq 60000))\"\n")
        helper.chmod(0o755)
        (tmp_path / "config.json").write_text(json.dumps({"credsStore": "deep"}))
        args += ["--docker-config", str(tmp_path)]
        env["PATH"] = f"{bindir}:{os.environ['PATH']}"
    line = assert_exit(run_cli(*args, env=env, cwd=tmp_path), 3, f"127.0.0.1:{port}")
    assert "RecursionError" not in line


# --- numbers -------------------------------------------------------------------------------------------------


@given(NUMBERS)
@FUZZ
def test_reference_ports(number: str) -> None:
    from imagelint.reference import parse_registry_name

    for ref in (f"127.0.0.1:{number}/app/x:1", f"[::1{number}/app/x:1", f"[::1]:{number}/app/x:1"):
        try:
            name = parse_registry_name(ref)
        except UsageError as exc:
            one_line(exc)
        else:
            port = name.registry.rpartition(":")[2]
            assert port.isascii() and port.isdigit() and 0 < int(port) <= 65535


def test_a_pod_with_a_bad_reference_does_not_end_the_audit(tmp_path: Path) -> None:
    layout = tmp_path / "ok"
    write_oci_layout(layout, {"v1": ImageSpec(layers=[[File("x", b"")]]).build()})
    (tmp_path / "images.txt").write_text(f"127.0.0.1:²/app/x:1\n[::1/app/x:1\noci-dir:{layout}:v1\n")
    run = run_main("audit", "--images", str(tmp_path / "images.txt"), "--driver", "550.54.15", "--gpu", "T4",
                   "--config-only", "-f", "json", cwd=tmp_path)
    assert "internal error" not in run.output and "Traceback" not in run.output
    report = json.loads(run.stdout)
    assert len(report["images"]) == 3


@given(NUMBERS)
@FUZZ
def test_no_proxy_ports(number: str) -> None:
    from imagelint.sources.proxy import _split_port

    host, port = _split_port(f"host:{number}")
    assert port is None or (isinstance(port, int) and port < 100000)
    host, port = _split_port(f"[::1]:{number}")
    assert port is None or isinstance(port, int)


@given(NUMBERS)
@FUZZ
def test_cuda_visible_devices_and_node_allocatable(number: str) -> None:
    from imagelint.cluster.node_status import NodeInfo
    from imagelint.cluster.nodes import _int
    from imagelint.doctor.context import gpu_count
    from imagelint.facts.gpuindex import parse_indices

    assert all(isinstance(i, int) for i in parse_indices(number))
    assert all(isinstance(i, int) for i in parse_indices(f"0,{number},cuda:{number}"))
    node = NodeInfo("n", {}, (), {}, {"nvidia.com/gpu": number}, "True", "", "", False, ())
    assert isinstance(gpu_count(node, "nvidia.com/"), int)
    assert _int(number) is None or isinstance(_int(number), int)


def test_cuda_visible_devices_in_an_image_is_read_not_a_crash(tmp_path: Path) -> None:
    write_oci_layout(tmp_path / "img", {"v1": ImageSpec(env={"CUDA_VISIBLE_DEVICES": "²,٣"}, layers=[[File("x", b"")]]).build()})
    run = run_main("check", f"oci-dir:{tmp_path / 'img'}:v1", "--driver", "550.54.15", "--gpu", "T4", cwd=tmp_path)
    assert run.returncode in (0, 1) and "internal error" not in run.output


@given(NUMBERS)
@FUZZ
def test_flags(number: str) -> None:
    from imagelint.audit.shard import parse_shard
    from imagelint.deadline import parse_deadline
    from imagelint.sizes import parse_size
    from imagelint.deploytarget.values import parse_compute_capability

    for parse in (lambda: parse_shard(f"{number}/4"), lambda: parse_shard(f"0/{number}"),
                  lambda: parse_compute_capability(number), lambda: parse_size("--max-image-size", number),
                  lambda: parse_deadline(number)):
        try:
            parse()
        except UsageError as exc:
            one_line(exc)


@pytest.mark.parametrize("args, fragment", [
    (["--compute-capability", "²"], "--compute-capability"),
    (["--max-image-size", "1e400"], "--max-image-size"),
    (["--deadline", "1e12"], "at most 1e+06 s (limit: --deadline"),
])
def test_flags_through_the_cli(tmp_path: Path, args: list[str], fragment: str) -> None:
    write_oci_layout(tmp_path / "img", {"v1": ImageSpec(layers=[[File("x", b"")]]).build()})
    run = run_main("check", f"oci-dir:{tmp_path / 'img'}:v1", "--driver", "550.54.15", "--gpu", "T4", *args)
    assert_exit(run, 2, fragment)


def test_a_shard_flag_of_unicode_digits() -> None:
    assert_exit(run_main("audit", "--images", "/nonexistent", "--driver", "550.54.15", "--shard", "²/4"), 2, "--shard")


@pytest.mark.parametrize("digits", [4400, 20])
def test_a_pax_size_of_thousands_of_digits(tmp_path: Path, digits: int) -> None:
    info = tarfile.TarInfo("big")
    info.pax_headers = {"size": "9" * digits}
    write_oci_layout(tmp_path / "img", {"v1": ImageSpec(layers=[[RawMember(info, b"")]], compression="none").build()})
    api = inspect_api(f"oci-dir:{tmp_path / 'img'}:v1")
    assert api.exit_code == 3 and "layer 0" in api.message, api


# --- TOML: every file we read --------------------------------------------------------------------------------

BIG = "1" * 5001


@pytest.mark.parametrize("name, files, args", [
    ("config", {".imagelint.toml": f"x = {BIG}\n"}, ["lint", "."]),
    ("pyproject", {"pyproject.toml": f"[tool.imagelint]\nx = {BIG}\n"}, ["lint", "."]),
    ("target", {"t.toml": f"x = {BIG}\n"}, ["target", "show", "--target-file", "t.toml"]),
    ("matrix", {"m.toml": f"x = {BIG}\n"}, ["lint", "--matrix", "m.toml", "."]),
    ("overlay", {"o.toml": f"x = {BIG}\n"}, ["lint", "--matrix-overlay", "o.toml", "."]),
])
def test_a_5001_digit_integer_in_any_toml_file(tmp_path: Path, name: str, files: dict[str, str], args: list[str]) -> None:
    (tmp_path / "Dockerfile").write_text("FROM ubuntu\n")
    for file, text in files.items():
        (tmp_path / file).write_text(text)
    assert_exit(run_main(*args, cwd=tmp_path), 2, "a number of more than 4300 digits")


@given(NUMBERS)
@FUZZ
def test_matrix_refresh_manifests(tmp_path_factory: pytest.TempPathFactory, number: str) -> None:
    from imagelint.matrix.refresh import ManifestError, read_manifest

    path = tmp_path_factory.mktemp("redist") / "redistrib.json"
    path.write_text(json.dumps({"release_label": f"12.{number}.0", "release_date": "2026-01-01",
                                "cuda_cudart": {"version": number}, "nvidia_driver": {"version": f"{number}.1"}}))
    try:
        read_manifest(path)
    except ManifestError as exc:
        one_line(exc)


def test_matrix_refresh_on_a_fifo_and_a_huge_version(tmp_path: Path) -> None:
    from imagelint.matrix.refresh import main as refresh

    os.mkfifo(tmp_path / "fifo.json")
    (tmp_path / "huge.json").write_text(json.dumps({"release_label": "1" * 5000, "cuda_cudart": {"version": "1" * 5000}}))
    for name in ("fifo.json", "huge.json"):
        assert refresh([str(tmp_path / name)]) == 2


def test_a_kubernetes_quantity_with_a_huge_exponent_is_no_quantity() -> None:
    from imagelint.kube.scheduler import parse_quantity

    assert parse_quantity("1e3000000") is None  # Fraction() of it alone takes 16 s
    assert parse_quantity("²") is None and parse_quantity("1e3") == 1000 and parse_quantity("500m") * 2 == 1
