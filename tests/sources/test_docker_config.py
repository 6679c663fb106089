"""imagelint.sources.docker_config answers as docker-py (``docker.auth``) does, for the same files.

docker-py is what imagelint used before (its import cost ~130 ms a run); it is installed for
the daemon source, so every case here asks both and compares: which file is read, which
credential helper a registry gets, and which ``auths`` entry.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys

import pytest

from imagelint.errors import ConfigError
from imagelint.sources.docker_config import (
    auths_entry,
    credential_store,
    find_docker_config,
    read_docker_config,
)


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


REGISTRIES = ("docker.io", "nvcr.io", "127.0.0.1:5000", "ghcr.io", "index.docker.io", "registry.example:443",
              "localhost:5000", "")

CONFIGS = {
    "plain": {"auths": {"nvcr.io": {"auth": _b64("$oauthtoken:nvapi-1")}, "ghcr.io": {"auth": _b64("u:p:with:colons")}}},
    "hub key": {"auths": {"https://index.docker.io/v1/": {"auth": _b64("hub:pw"), "email": "a@b"}}},
    "url keys": {"auths": {"https://nvcr.io/v2/": {"auth": _b64("a:b")}, "http://127.0.0.1:5000/x": {"auth": _b64("c:d")},
                           "index.docker.io": {"auth": _b64("e:f")}}},
    "exact wins over url": {"auths": {"https://nvcr.io": {"auth": _b64("url:1")}, "nvcr.io": {"auth": _b64("exact:2")}}},
    "identity token": {"auths": {"ghcr.io": {"identitytoken": "tok", "auth": _b64("ignored:x")}}},
    "empty entries": {"auths": {"nvcr.io": {}, "ghcr.io": {"email": "x"}}},
    "store": {"credsStore": "desktop", "auths": {"nvcr.io": {}}},
    "helpers": {"credHelpers": {"nvcr.io": "ngc", "https://index.docker.io/v1/": "hub"}, "credsStore": "pass",
                "auths": {"ghcr.io": {"auth": _b64("g:h")}}},
    "helpers only": {"credHelpers": {"127.0.0.1:5000": "local"}},
    "legacy json": {"nvcr.io": {"auth": _b64("old:style")}, "https://index.docker.io/v1/": {"auth": _b64("o:s")}},
    "legacy json, one bad": {"nvcr.io": {"auth": _b64("old:style")}, "other": "not an object"},
    "empty": {},
    "empty sections": {"auths": {}, "credsStore": "", "credHelpers": {}, "nvcr.io": {"auth": _b64("x:y")}},
    "unicode": {"auths": {"nvcr.io": {"auth": _b64("ü:ß")}}},
    "base64 with junk": {"auths": {"nvcr.io": {"auth": "dXNl\ncjpwdw=="}}},
}


def _docker_py(path: str | None, registry: str) -> tuple:
    """docker-py's answer in a child (its import must not leak into this process's timings)."""
    code = (
        "import json, sys\nimport docker.auth as a\n"
        "c = a.load_config(config_path=sys.argv[1] or None)\n"
        "s = c.get_credential_store(sys.argv[2])\n"
        "e = None if s else c.resolve_authconfig(sys.argv[2] or None)\n"
        "print(json.dumps([s, e, c.auths]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code, path or "", registry], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "HOME": os.environ.get("HOME", "/root")})
    assert done.returncode == 0, done.stderr[-1500:]
    return tuple(json.loads(done.stdout))


def _ours(path: str | None, registry: str) -> tuple:
    config = read_docker_config(path)
    store = credential_store(config, registry)
    return store, None if store else auths_entry(config, registry), config.auths


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_every_registry_gets_what_docker_py_gives(tmp_path, name: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(CONFIGS[name]))
    # docker-py is asked once per file for all registries (a child per registry would be slow).
    code = (
        "import json, sys\nimport docker.auth as a\nout = []\n"
        "for r in json.loads(sys.argv[2]):\n"
        "    c = a.load_config(config_path=sys.argv[1])\n"
        "    s = c.get_credential_store(r)\n"
        "    out.append([s, None if s else c.resolve_authconfig(r or None), c.auths])\n"
        "print(json.dumps(out))\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(path), json.dumps(REGISTRIES)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr[-1500:]
    for registry, theirs in zip(REGISTRIES, json.loads(done.stdout)):
        assert list(_ours(str(path), registry)) == theirs, (name, registry)


@pytest.mark.parametrize("text", [
    "auth = " + _b64("hub:legacy") + "\nemail = me@example\n",
    "auth = " + _b64("no-colon") + "\nemail = x\n",
    "auth = " + _b64("hub:x") + "\n",
    "garbage\nmore garbage\n",
    "",
])
def test_the_legacy_line_format_as_docker_py_reads_it(tmp_path, text: str) -> None:
    path = tmp_path / ".dockercfg"
    path.write_text(text)
    assert list(_ours(str(path), "docker.io")) == list(_docker_py(str(path), "docker.io"))


def test_which_file_is_read_follows_docker_py(tmp_path, monkeypatch) -> None:
    home, env = tmp_path / "home", tmp_path / "env"
    (home / ".docker").mkdir(parents=True)
    env.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("DOCKER_CONFIG", raising=False)
    assert find_docker_config() is None
    (home / ".dockercfg").write_text("{}")
    assert find_docker_config() == str(home / ".dockercfg")
    (home / ".docker" / "config.json").write_text("{}")
    assert find_docker_config() == str(home / ".docker" / "config.json")
    monkeypatch.setenv("DOCKER_CONFIG", str(env))
    assert find_docker_config() == str(home / ".docker" / "config.json")  # $DOCKER_CONFIG without a file: next
    (env / "config.json").write_text("{}")
    assert find_docker_config() == str(env / "config.json")
    assert find_docker_config(str(tmp_path / "given")) is None  # a directory given: only there
    from docker.utils.config import find_config_file

    assert find_config_file() == str(env / "config.json")


@pytest.mark.parametrize("doc, message", [
    ({"auths": {"nvcr.io": "not an object"}}, "invalid 'auths' section"),
    ({"auths": ["nvcr.io"]}, "invalid 'auths' section"),
    ({"auths": {"nvcr.io": {"auth": _b64("no colon")}}}, "cannot be decoded"),
    ({"auths": {"nvcr.io": {"auth": 12}}}, "cannot be decoded"),
    ({"auths": {"nvcr.io": {"auth": "é"}}}, "cannot be decoded"),
    ({"auths": {"nvcr.io": {"auth": base64.b64encode(b"\xff\xfe:x").decode()}}}, "cannot be decoded"),
    (["a", "list"], "not a JSON object"),
    ({"credHelpers": ["nvcr.io"]}, "credsStore / credHelpers"),
])
def test_a_malformed_config_is_a_config_error_never_a_traceback(tmp_path, doc, message: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ConfigError, match=message):
        config = read_docker_config(str(path))
        credential_store(config, "nvcr.io")


def test_an_unreadable_or_huge_config_is_a_config_error(tmp_path) -> None:
    (tmp_path / "dir.json").mkdir()
    with pytest.raises(ConfigError, match="cannot read"):
        read_docker_config(str(tmp_path / "dir.json"))
    big = tmp_path / "big.json"
    big.write_bytes(b" " * ((16 << 20) + 1))
    with pytest.raises(ConfigError, match="larger than"):
        read_docker_config(str(big))


def test_load_credentials_does_not_import_docker_py(tmp_path) -> None:
    (tmp_path / "config.json").write_text(json.dumps(CONFIGS["plain"]))
    code = ("import sys\nfrom imagelint.sources.registry_auth import load_credentials\n"
            f"c = load_credentials('nvcr.io', {str(tmp_path)!r})\n"
            "print(c.username, 'docker' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["$oauthtoken", "False"], done.stderr[-1500:]
