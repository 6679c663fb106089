"""The Docker client's config file, read as the ``docker`` package (docker-py) reads it.

Which file: the directory given (``--docker-config``) and nothing else; otherwise
``$DOCKER_CONFIG/config.json``, ``~/.docker/config.json``, then the legacy ``~/.dockercfg``,
the first that exists. What it says, for one registry:

- ``credHelpers[key]``, else ``credsStore``: the name of a credential helper to ask (``key``
  is the registry's name, ``https://index.docker.io/v1/`` for Docker Hub);
- else the ``auths`` entry whose key is the registry's name, or failing that the first whose
  key names it as a URL (``https://nvcr.io/v2/`` names ``nvcr.io``; ``index.docker.io`` is
  Docker Hub): ``identitytoken`` (then nothing else of the entry counts), or ``auth``
  (base64 ``user:password``), or ``{}`` (a store holds the secret);
- a file that is not JSON is read as the legacy format (``auth = ...`` and ``email = ...``
  lines, Docker Hub's credentials), and a JSON object without any of the three sections as the
  legacy JSON form (the ``auths`` map itself), where a malformed entry means no credentials.

imagelint reads the file itself so that a check does not import the docker SDK (a daemon
client) just to find registry credentials. ``tests/sources/test_docker_config.py`` holds
this module to docker-py's answers for the same files. Where docker-py would raise a Python
error of its own on a malformed file (an ``auth`` that is not a string, a file that is a JSON
list), this is a ``ConfigError`` as every other malformed config is.
"""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass
from typing import Any

from imagelint.errors import ConfigError
from imagelint.reference import DOCKER_HUB
from imagelint.untrusted import loads_json

DOCKER_HUB_CONFIG_KEY = "https://index.docker.io/v1/"  # the key `docker login` writes for Docker Hub
MAX_CONFIG_BYTES = 16 << 20  # a docker config is a few KB; a larger file is not read into memory


@dataclass(frozen=True)
class DockerConfig:
    """The auth-related sections of one docker config file (``path``; None when there is none)."""

    path: str | None
    auths: dict[str, dict[str, Any]]  # key -> {"username", "password", "email", "serveraddress"} | {"IdentityToken"} | {}
    creds_store: Any = None
    cred_helpers: Any = None


def find_docker_config(directory: str | None = None) -> str | None:
    """The config file to read: in ``directory`` only when given, else docker's lookup order."""
    if directory is not None:
        path = os.path.join(directory, "config.json")
        return path if os.path.exists(path) else None
    env = os.environ.get("DOCKER_CONFIG")
    home = os.path.expanduser("~")
    for path in ([os.path.join(env, "config.json")] if env else []) + [
        os.path.join(home, ".docker", "config.json"),
        os.path.join(home, ".dockercfg"),
    ]:
        if os.path.exists(path):
            return path
    return None


def read_docker_config(path: str | None) -> DockerConfig:
    """The file's auth sections; ``ConfigError`` for a file docker could not use either."""
    if path is None:
        return DockerConfig(None, {})
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read docker config ({exc.__class__.__name__})", path=path) from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"docker config is larger than {MAX_CONFIG_BYTES >> 20} MiB", path=path)
    try:
        data = loads_json(raw.decode("utf-8"))
    except ValueError:  # not JSON (UnicodeDecodeError included): the legacy key = value format
        return DockerConfig(path, _legacy_lines(raw))
    if not isinstance(data, dict):
        raise ConfigError("docker config is not a JSON object", path=path)
    sections = {k: data[k] for k in ("auths", "credsStore", "credHelpers") if data.get(k)}
    if not sections:  # the legacy JSON form: the auths map itself, all or nothing
        return DockerConfig(path, _entries(data, path, strict=False))
    auths = _entries(sections["auths"], path, strict=True) if "auths" in sections else {}
    return DockerConfig(path, auths, sections.get("credsStore"), sections.get("credHelpers"))


def _entries(entries: Any, path: str, strict: bool) -> dict[str, dict[str, Any]]:
    if not isinstance(entries, dict):
        raise ConfigError("docker config has an invalid 'auths' section", path=path)
    out: dict[str, dict[str, Any]] = {}
    for key, entry in entries.items():
        if not isinstance(entry, dict):
            if strict:
                raise ConfigError("docker config has an invalid 'auths' section", path=path)
            return {}
        if "identitytoken" in entry:
            out[key] = {"IdentityToken": entry["identitytoken"]}  # the rest of the entry does not count
        elif "auth" not in entry:
            out[key] = {}  # the secret is in a credential store
        else:
            username, password = _decode_auth(entry["auth"], key, path)
            out[key] = {"username": username, "password": password, "email": entry.get("email"), "serveraddress": key}
    return out


def _user_password(auth: str | bytes) -> tuple[str, str]:
    """``auth``: base64 of ``user:password`` (characters outside the alphabet skipped, as docker
    does); ``ValueError`` (``binascii.Error`` and ``UnicodeError`` included) when it is not one."""
    login, colon, password = base64.b64decode(auth.encode("ascii") if isinstance(auth, str) else auth).partition(b":")
    if not colon:
        raise ValueError("no colon")
    return login.decode("utf-8"), password.decode("utf-8")


def _decode_auth(auth: Any, key: str, path: str) -> tuple[str, str]:
    where = f"docker config: the entry for {key[:100]} cannot be decoded"
    if not isinstance(auth, (str, bytes)):
        raise ConfigError(where, path=path)
    try:
        return _user_password(auth)
    except ValueError:
        raise ConfigError(where, path=path) from None


def _legacy_lines(raw: bytes) -> dict[str, dict[str, Any]]:
    """``~/.dockercfg`` of old: ``auth = BASE64`` and ``email = ...``, Docker Hub's; anything else, none."""
    try:
        values = [line.strip().split(" = ")[1] for line in raw.decode("utf-8").splitlines(keepends=True)]
        if len(values) < 2:
            return {}
        username, password = _user_password(values[0])
        return {DOCKER_HUB: {"username": username, "password": password, "email": values[1],
                             "serveraddress": DOCKER_HUB_CONFIG_KEY}}
    except (ValueError, IndexError):
        return {}


def config_key(registry: str) -> str:
    """The key a registry's credentials are stored under (Docker Hub's is historical)."""
    return DOCKER_HUB_CONFIG_KEY if not registry or registry == DOCKER_HUB else registry


def credential_store(config: DockerConfig, registry: str) -> Any:
    """The helper named for ``registry`` (``credHelpers``, then ``credsStore``), or None."""
    helpers = config.cred_helpers
    if helpers is not None and not isinstance(helpers, dict):
        raise ConfigError("docker config: credsStore / credHelpers is not valid", path=config.path or "docker config")
    return (helpers or {}).get(config_key(registry)) or config.creds_store


def index_name(name: str) -> str:
    """A registry key as docker compares them: no scheme, no path; ``index.docker.io`` is Docker Hub."""
    host = name.replace("http://", "").replace("https://", "").split("/", 1)[0]
    return DOCKER_HUB if host == "index.docker.io" else host


def auths_entry(config: DockerConfig, registry: str) -> dict[str, Any] | None:
    """The ``auths`` entry for ``registry``: its own key, else the first key that names it."""
    wanted = index_name(registry) if registry else DOCKER_HUB
    if wanted in config.auths:
        return config.auths[wanted]
    for key, entry in config.auths.items():
        if index_name(key) == wanted:
            return entry
    return None
