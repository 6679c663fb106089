"""The exit-code contract holds on inputs that used to escape it as exit 70 ("internal error")
or as exit 3 (the code for an unreadable image): deeply nested TOML (exit 2, file:line), a
daemon whose error JSON has no ``message`` (exit 3), stdout on a full disk (exit 4,
``EXIT_OUTPUT``: the report could not be written; a closed pipe keeps click's quiet exit 1,
tests/speed/test_console_entry.py).
"""

from __future__ import annotations

import json
import os
import socketserver
import subprocess
import threading
from http.server import BaseHTTPRequestHandler

import pytest

EXIT_OUTPUT = 4  # the contract (imagelint.errors.EXIT_OUTPUT): the report could not be written
from tests.hostile.cli import assert_exit, assert_unreadable, imagelint_command, run_cli

DEEP_ARRAY = "[meta]\nkind = \"matrix\"\n\na = " + "[" * 3000 + "]" * 3000 + "\n"
DEEP_TABLE = "a = " + "{b = " * 3000 + "1" + "}" * 3000 + "\n"


@pytest.mark.parametrize("text,line", [(DEEP_ARRAY, 4), (DEEP_TABLE, 1)], ids=["array", "inline-table"])
@pytest.mark.parametrize("how", ["matrix-validate", "config", "target-file", "matrix"])
def test_deeply_nested_toml_is_a_usage_error_with_its_line(tmp_path, text, line, how):
    path = tmp_path / "deep.toml"
    path.write_text(text)
    args = {"matrix-validate": ["matrix", "validate", str(path)],
            "config": ["check", "oci-dir:/nonexistent", "--driver", "535.104.05", "--config", str(path)],
            "target-file": ["check", "oci-dir:/nonexistent", "--target-file", str(path)],
            "matrix": ["check", "oci-dir:/nonexistent", "--driver", "535.104.05", "--matrix", str(path)]}[how]
    run = run_cli(*args, env={"IMAGELINT_NO_CACHE": "1"}, timeout=60)
    assert_exit(run, 2, f"deep.toml:{line}:", "nested too deeply")


class _GarbledDaemon:
    """A Docker API on a unix socket that pings and versions fine, then answers every other
    request with an error JSON that has no ``message``."""

    def __init__(self, path: str) -> None:
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                route = self.path.split("?")[0]
                if route.endswith("/_ping"):
                    code, body = 200, b"OK"
                elif route.endswith("/version"):
                    code, body = 200, json.dumps({"ApiVersion": "1.43", "MinAPIVersion": "1.12", "Version": "24.0.0"}).encode()
                else:
                    code, body = 500, b'{"msg":"an error without a message field"}'
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_HEAD = do_GET  # noqa: N815

        class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
            daemon_threads = True

            def get_request(self):  # type: ignore[no-untyped-def]
                request, _ = super().get_request()
                return request, ("local", 0)  # BaseHTTPRequestHandler wants a (host, port)

        self.server = Server(path, Handler)
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_daemon_error_without_a_message_is_exit_3(tmp_path):
    sock = str(tmp_path / "docker.sock")
    daemon = _GarbledDaemon(sock)
    try:
        run = run_cli("inspect", "docker:hostile/app:1", env={"DOCKER_HOST": f"unix://{sock}"}, timeout=30)
        assert_unreadable(run, "daemon", "cannot read")
    finally:
        daemon.stop()


@pytest.fixture(scope="module")
def layout(tmp_path_factory) -> str:
    from tests.support.hostile_images import image_of, publish, tar_layer
    from tests.support.imagebuilder import File

    built = image_of([tar_layer([File("etc/hello", b"hi\n")])], env={"CUDA_VERSION": "12.4.1"})
    return publish(built, tmp_path_factory.mktemp("out"))["oci-dir"]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("args", [["check", "--driver", "535.104.05", "--no-cache"], ["inspect", "--no-cache"]])
def test_stdout_on_a_full_disk_is_exit_4_in_one_line(layout, args):
    with open("/dev/full", "w") as full:
        proc = subprocess.run([*imagelint_command(), args[0], layout, *args[1:]], stdout=full, stderr=subprocess.PIPE,
                              text=True, timeout=60)
    lines = proc.stderr.splitlines()
    assert proc.returncode == EXIT_OUTPUT, proc.stderr
    assert lines == ["imagelint: error: cannot write the output: No space left on device"], lines


@pytest.mark.parametrize("how", ["lint", "config", "target-file", "matrix", "matrix-validate", "kubeconfig"])
def test_a_fifo_or_device_in_place_of_an_input_file_is_refused_not_waited_on(tmp_path, layout, how):
    fifo = tmp_path / ("Dockerfile" if how == "lint" else "input.toml")
    os.mkfifo(fifo)
    args = {"lint": ["lint", str(fifo)],
            "config": ["check", layout, "--driver", "535.104.05", "--config", str(fifo)],
            "target-file": ["check", layout, "--target-file", str(fifo)],
            "matrix": ["check", layout, "--driver", "535.104.05", "--matrix", str(fifo)],
            "matrix-validate": ["matrix", "validate", str(fifo)],
            "kubeconfig": ["target", "show", "--cluster", "--kubeconfig", str(fifo)]}[how]
    run = run_cli(*args, env={"IMAGELINT_NO_CACHE": "1", "IMAGELINT_DEADLINE": "20"}, timeout=30)
    assert run.returncode == (3 if how == "kubeconfig" else 2), run.stderr
    assert "not a regular file" in run.error_line()
    assert run.seconds < 10


def test_a_device_as_a_config_file_is_refused(tmp_path):
    run = run_cli("check", "oci-dir:/nonexistent", "--driver", "535.104.05", "--config", "/dev/zero",
                  env={"IMAGELINT_NO_CACHE": "1"}, timeout=30)
    assert_exit(run, 2, "/dev/zero", "not a regular file")
