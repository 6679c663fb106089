"""Credentials go to their registry only, come from the docker config only, and appear in no message.

Adversaries: a storage host (where the registry redirects a blob) that answers 401 with a
Bearer challenge of its own; a second service on another port of the registry's host that
would collect its cookies; a ``~/.netrc`` with an entry for the registry; a token endpoint
whose body is a gzip bomb; credential helpers that hang, flood or fail; a password typed
into the image reference.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import stat
import uuid
from pathlib import Path

import pytest

from tests.hostile.cli import MiB, assert_exit, assert_unreadable, run_cli
from tests.hostile.scripted_registry import Reply, ScriptedRegistry
from tests.support.hostile_images import image_of, tar_layer
from tests.support.imagebuilder import File

PASSWORD = "s3cret-pw-" + uuid.uuid4().hex[:10]
USER = "ci-bot"
BASIC = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()


@pytest.fixture
def servers():
    started = [ScriptedRegistry() for _ in range(2)]
    yield started
    for s in started:
        s.stop()


def _serve(reg: ScriptedRegistry, repo: str, *, blob_redirect: str | None = None, cookie: bool = False):
    built = image_of([tar_layer([File("etc/hello", b"hi\n")])], env={"CUDA_VERSION": "12.4.1"})
    reg.manifest(repo, "t", built.manifest, built.manifest_media_type)
    cfg_digest = json.loads(built.manifest)["config"]["digest"]
    reg.blob(repo, cfg_digest, built.config)
    for digest, blob, _, _ in built.layers:
        if blob_redirect:
            reg.routes[f"/v2/{repo}/blobs/{digest}"] = Reply(307, b"", {"Location": blob_redirect})
        else:
            reg.blob(repo, digest, blob)
    if cookie:
        for path in list(reg.routes):
            reg.routes[path].headers["Set-Cookie"] = f"session={PASSWORD}; Path=/"
    return built


def _docker_config(tmp_path: Path, host: str, helper: str | None = None) -> Path:
    d = tmp_path / "docker"
    d.mkdir(exist_ok=True)
    doc: dict = {"auths": {host: {"auth": base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()}}}
    if helper:
        doc = {"auths": {}, "credHelpers": {host: helper}}
    (d / "config.json").write_text(json.dumps(doc))
    return d


def _home(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {"HOME": str(home), "DOCKER_CONFIG": str(home / "none"), "IMAGELINT_NO_CACHE": "1"}


def _all_headers(*regs: ScriptedRegistry) -> str:
    return json.dumps([h for r in regs for _, h in r.headers])


def test_a_storage_hosts_own_challenge_never_gets_the_registrys_credentials(servers, tmp_path):
    reg, storage = servers
    storage.default = Reply(401, b"{}", {"WWW-Authenticate": f'Bearer realm="http://{storage.host}/token",service="s3"'})
    storage.routes["/token"] = Reply(200, b'{"token":"stolen"}', {"Content-Type": "application/json"})
    _serve(reg, "a/b", blob_redirect=f"http://{storage.host}/bucket/layer")
    run = run_cli("inspect", f"registry:{reg.host}/a/b:t", "--insecure-registry", reg.host,
                  "--insecure-registry", storage.host, "--docker-config", str(_docker_config(tmp_path, reg.host)),
                  env=_home(tmp_path), timeout=60)
    line = assert_unreadable(run, "401", storage.host)
    assert "/token" not in [p for p, _ in storage.seen], "the storage host's token realm was asked"
    assert BASIC not in _all_headers(storage) and PASSWORD not in _all_headers(storage)
    assert PASSWORD not in run.output and "credentials" in line


def test_cookies_do_not_follow_a_redirect_to_another_port_of_the_same_host(servers, tmp_path):
    reg, other = servers
    built = _serve(reg, "a/b", cookie=True)
    layer_digest, blob = built.layers[0][0], built.layers[0][1]
    reg.routes[f"/v2/a/b/blobs/{layer_digest}"] = Reply(307, b"", {"Location": f"http://{other.host}/blob",
                                                                     "Set-Cookie": f"session={PASSWORD}; Path=/"})
    other.routes["/blob"] = Reply(200, blob, {"Content-Type": "application/octet-stream"})
    run = run_cli("inspect", f"registry:{reg.host}/a/b:t", "--insecure-registry", reg.host,
                  "--insecure-registry", other.host, env=_home(tmp_path), timeout=60)
    assert run.returncode == 0, run.stderr
    assert "/blob" in [p for p, _ in other.seen]
    assert PASSWORD not in _all_headers(other) and PASSWORD not in _all_headers(reg), "a cookie was sent back"


def test_netrc_is_never_used(servers, tmp_path):
    reg, _ = servers
    _serve(reg, "a/b")
    env = _home(tmp_path)
    netrc = Path(env["HOME"]) / ".netrc"
    netrc.write_text(f"machine 127.0.0.1 login {USER} password {PASSWORD}\n")
    netrc.chmod(0o600)
    run = run_cli("inspect", f"registry:{reg.host}/a/b:t", "--insecure-registry", reg.host, env=env, timeout=60)
    assert run.returncode == 0, run.stderr
    assert all(auth is None for _, auth in reg.seen), "netrc credentials were sent"


def test_a_gzip_bomb_from_the_token_endpoint_is_bounded(servers, tmp_path):
    reg, tokens = servers
    reg.default = Reply(401, b"{}", {"WWW-Authenticate": f'Bearer realm="http://{tokens.host}/token",service="r"'})
    member = gzip.compress(b"A" * MiB, compresslevel=9)  # multi-member gzip: 1 GiB of token from ~1 MB
    bomb = gzip.compress(b'{"token":"') + member * 1024
    tokens.routes["/token"] = Reply(200, bomb, {"Content-Type": "application/json", "Content-Encoding": "gzip"})
    run = run_cli("inspect", f"registry:{reg.host}/a/b:t", "--insecure-registry", reg.host,
                  "--insecure-registry", tokens.host, env=_home(tmp_path), timeout=60, rlimit_as=2048 * MiB)
    assert_unreadable(run, "token", "larger than")
    assert run.peak_rss_bytes < 300 * MiB, run.peak_rss_bytes


def _helper(tmp_path: Path, name: str, script: str) -> dict[str, str]:
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    exe = bindir / f"docker-credential-{name}"
    exe.write_text("#!/bin/sh\n" + script)
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return {"PATH": f"{bindir}:{os.environ['PATH']}"}


@pytest.mark.parametrize("name,script,fragment", [
    ("hang", "exec sleep 60\n", "no answer within"),
    ("flood", "exec cat /dev/zero\n", "bytes of output"),
    ("fail", f"echo 'oops {PASSWORD}' >&2; exit 3\n", "exited with status 3"),
    ("garbage", "echo not-json\n", "JSON"),
])
def test_credential_helpers_that_hang_flood_or_fail(servers, tmp_path, name, script, fragment):
    reg, _ = servers
    _serve(reg, "a/b")
    env = {**_home(tmp_path), **_helper(tmp_path, name, script)}
    run = run_cli("inspect", f"registry:{reg.host}/a/b:t", "--insecure-registry", reg.host, "--timeout", "2",
                  "--docker-config", str(_docker_config(tmp_path, reg.host, helper=name)), env=env, timeout=30,
                  rlimit_as=2048 * MiB)
    assert_unreadable(run, f"docker-credential-{name}", fragment)
    assert run.seconds < 15 and run.peak_rss_bytes < 300 * MiB
    assert PASSWORD not in run.output


def test_a_working_credential_helper_is_used(servers, tmp_path):
    reg, _ = servers
    _serve(reg, "a/b")
    plain = dict(reg.routes)
    gate = Reply(401, b"{}", {"WWW-Authenticate": 'Basic realm="r"'})

    class Gated(dict):  # every path answers only with the helper's credentials
        def get(self, path, default=None):  # type: ignore[override]
            auth = next((a for p, a in reversed(reg.seen) if p == path), None)
            return plain.get(path, default) if auth == BASIC else gate

    reg.routes = Gated()
    answer = json.dumps({"ServerURL": reg.host, "Username": USER, "Secret": PASSWORD})
    env = {**_home(tmp_path), **_helper(tmp_path, "ok", f"cat >/dev/null; echo '{answer}'\n")}
    run = run_cli("inspect", f"registry:{reg.host}/a/b:t", "--insecure-registry", reg.host,
                  "--docker-config", str(_docker_config(tmp_path, reg.host, helper="ok")), env=env, timeout=30)
    assert run.returncode == 0, run.stderr
    assert BASIC in [a for _, a in reg.seen] and PASSWORD not in run.output


@pytest.mark.parametrize("ref", ["registry:{u}:{p}@{h}/a/b:t", "{u}:{p}@{h}/a/b", "registry:https://{u}:{p}@{h}/a/b"])
def test_a_password_in_the_image_reference_is_never_echoed(tmp_path, ref):
    run = run_cli("check", ref.format(u=USER, p=PASSWORD, h="127.0.0.1:1"), "--driver", "535.104.05",
                  env=_home(tmp_path), timeout=30)
    assert_exit(run, 2, "credentials", "docker config")
    assert PASSWORD not in run.output
