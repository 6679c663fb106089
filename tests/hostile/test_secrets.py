"""Credentials never leave: every output format, stderr, files written and the cache dir are grepped.

Basic passwords (and their base64 ``auth`` form), bearer tokens (any JWT), identity
tokens, kubeconfig tokens and client keys, and env values with secret-looking names.
"""

from __future__ import annotations

import base64
import json
import uuid
from pathlib import Path

import pytest

from tests.hostile.cli import CliRun, run_cli
from tests.support.hostile_images import image_of, tar_layer
from tests.support.imagebuilder import File
from tests.support.registry import DEFAULT_IDENTITY_TOKEN, DEFAULT_PASSWORD, DEFAULT_USER

FORMATS = ("text", "json", "sarif", "github", "junit")
ENV_SECRETS = {"AWS_SECRET_ACCESS_KEY": "env-s3cret-aws-" + uuid.uuid4().hex[:8],
               "DB_PASSWORD": "env-s3cret-db-" + uuid.uuid4().hex[:8],
               "HF_TOKEN": "env-s3cret-hf-" + uuid.uuid4().hex[:8]}


def _image():
    # A driver library on the loader path and a hard-coded GPU index: findings that quote env and files.
    env = {"CUDA_VERSION": "12.4.1", "NVIDIA_REQUIRE_CUDA": "cuda>=12.4", "CUDA_VISIBLE_DEVICES": "3",
           "LD_LIBRARY_PATH": "/usr/local/nvidia/lib64", **ENV_SECRETS}
    return image_of([tar_layer([File("usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05", b"\x7fELF" + bytes(64)),
                                File("entrypoint.sh", b"#!/bin/sh\nexport CUDA_VISIBLE_DEVICES=2\nexec app\n")])],
                    env=env, labels={"registry-password": ENV_SECRETS["DB_PASSWORD"]})


def _everything(run: CliRun, *dirs: Path) -> str:
    texts = [run.stdout, run.stderr]
    for d in dirs:
        for p in sorted(d.rglob("*")):
            if p.is_file():
                texts.append(p.read_bytes().decode("latin-1"))
    return "\n".join(texts)


def _assert_clean(blob: str, *secrets: str) -> None:
    for secret in secrets:
        assert secret and secret not in blob, f"secret leaked: {secret[:6]}…"
    assert "eyJ" not in blob, "a JWT (bearer token) leaked"
    for value in ENV_SECRETS.values():
        assert value not in blob, "a secret env value leaked"


def _check_all_formats(ref: str, out: Path, cache: Path, home: Path, *extra: str) -> CliRun:
    out.mkdir(parents=True, exist_ok=True)
    (out / "Dockerfile").write_text("FROM scratch\n")  # where SARIF points the image's findings
    args = ["check", ref, "--driver", "535.104.05", "--gpu", "H100", "--cache-dir", str(cache), *extra,
            "--dockerfile", "Dockerfile", "--format", "text"]
    for fmt in FORMATS[1:]:
        args += ["--format", f"{fmt}={out / ('report.' + fmt)}"]
    return run_cli(*args, env={"HOME": str(home), "DOCKER_CONFIG": str(home / "none"),
                               "GITHUB_STEP_SUMMARY": str(out / "summary.md")}, cwd=out, timeout=90)


@pytest.fixture
def dirs(tmp_path):
    d = {k: tmp_path / k for k in ("out", "cache", "home")}
    for p in d.values():
        p.mkdir()
    return d


def test_basic_credentials_and_env_secrets_never_appear(tls_registry, tmp_path, dirs):
    repo = f"secrets/{uuid.uuid4().hex[:8]}"
    tls_registry.push(repo, "1", _image())
    config = tls_registry.docker_config_dir(tmp_path / "docker")
    auth_b64 = base64.b64encode(f"{DEFAULT_USER}:{DEFAULT_PASSWORD}".encode()).decode()
    ref = f"registry:{tls_registry.host}/{repo}:1"
    ok = _check_all_formats(ref, dirs["out"], dirs["cache"], dirs["home"], "--ca-cert", tls_registry.ca_cert,
                            "--docker-config", str(config))
    assert ok.returncode in (0, 1), ok.stderr
    assert (dirs["out"] / "report.sarif").exists() and list(dirs["cache"].rglob("*.ilx")), "reports and cache written"
    findings = json.loads((dirs["out"] / "report.json").read_text())
    assert findings["results"][0]["findings"], "the image must produce findings for this test to mean something"
    _assert_clean(_everything(ok, dirs["out"], dirs["cache"], dirs["home"]), DEFAULT_PASSWORD, auth_b64)
    # and when the password is wrong: the error in every format, still nothing secret
    wrong = "wr0ng-" + uuid.uuid4().hex
    bad_config = tls_registry.docker_config_dir(tmp_path / "docker-bad", password=wrong)
    bad = _check_all_formats(ref, tmp_path / "out-bad", dirs["cache"], dirs["home"], "--ca-cert",
                             tls_registry.ca_cert, "--docker-config", str(bad_config))
    assert bad.returncode == 3, bad.stderr
    assert "401" in bad.stderr
    wrong_b64 = base64.b64encode(f"{DEFAULT_USER}:{wrong}".encode()).decode()
    _assert_clean(_everything(bad, tmp_path / "out-bad", dirs["cache"]), wrong, wrong_b64, DEFAULT_PASSWORD)


def test_bearer_and_identity_tokens_never_appear(token_registry, tmp_path, dirs):
    repo = f"secrets/{uuid.uuid4().hex[:8]}"
    token_registry.push(repo, "1", _image())
    ref = f"registry:{token_registry.host}/{repo}:1"
    for name, config in (("password", token_registry.docker_config_dir(tmp_path / "d1")),
                         ("identity", token_registry.docker_config_dir(tmp_path / "d2", identity_token=DEFAULT_IDENTITY_TOKEN))):
        run = _check_all_formats(ref, dirs["out"] / name, dirs["cache"], dirs["home"], "--ca-cert",
                                 token_registry.ca_cert, "--docker-config", str(config))
        assert run.returncode in (0, 1), run.stderr
        _assert_clean(_everything(run, dirs["out"] / name, dirs["cache"]), DEFAULT_PASSWORD, DEFAULT_IDENTITY_TOKEN)
    # a repository whose token endpoint fails: the error path
    token_registry.token_server.broken[repo] = "garbage"
    run = _check_all_formats(ref, dirs["out"] / "broken", dirs["cache"], dirs["home"], "--ca-cert",
                             token_registry.ca_cert, "--docker-config", str(tmp_path / "d1"), "--no-cache")
    assert run.returncode == 3, run.stderr
    _assert_clean(_everything(run, dirs["out"] / "broken"), DEFAULT_PASSWORD)


def _client_key_pem() -> bytes:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


@pytest.mark.parametrize("token_ok", [True, False])
def test_kubeconfig_tokens_and_client_keys_never_appear(token_ok, tmp_path, dirs):
    from tests.support.fakekube import FakeKube
    from tests.deploytarget.conftest import realistic_state

    token = "kube-bearer-" + uuid.uuid4().hex
    kube = FakeKube(realistic_state(), tmp_path, token).start()
    try:
        path = kube.write_kubeconfig(tmp_path / "kubeconfig", token=token if token_ok else "wrong-" + token)
        doc = json.loads(path.read_text())
        key_pem = _client_key_pem()
        doc["users"][0]["user"]["client-key-data"] = base64.b64encode(key_pem).decode()
        path.write_text(json.dumps(doc))
        layout = tmp_path / "img"
        from tests.support.hostile_images import publish

        ref = publish(_image(), layout)["oci-dir"]
        out = dirs["out"]
        (out / "Dockerfile").write_text("FROM scratch\n")
        args = ["check", ref, "--cluster", "--kubeconfig", str(path), "--cache-dir", str(dirs["cache"]),
                "--dockerfile", "Dockerfile", "--format", "text"]
        for fmt in FORMATS[1:]:
            args += ["--format", f"{fmt}={out / ('report.' + fmt)}"]
        run = run_cli(*args, env={"HOME": str(dirs["home"])}, cwd=out, timeout=90)
        assert run.returncode in ((0, 1) if token_ok else (3,)), run.stderr
        key_body = key_pem.decode().splitlines()[1]
        _assert_clean(_everything(run, out, dirs["cache"], dirs["home"]), token, key_body,
                      base64.b64encode(key_pem).decode()[:40])
    finally:
        kube.stop()


def test_inspect_redacts_secret_looking_env_and_labels(tmp_path):
    from tests.support.hostile_images import publish

    ref = publish(_image(), tmp_path / "img")["oci-dir"]
    for fmt in ("text", "json"):
        run = run_cli("inspect", "--format", fmt, ref, "--no-cache", cwd=tmp_path, timeout=60)
        assert run.returncode == 0, run.stderr
        _assert_clean(run.output)
    doc = json.loads(run.stdout)
    shown = {e["name"]: e["value"] for e in doc["env"]}
    assert shown["HF_TOKEN"] == "[redacted]" and shown["CUDA_VERSION"] == "12.4.1"
