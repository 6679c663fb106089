"""``audit --use-pull-secrets``: the registry credentials in the image pull secrets pods name.

Only the Secrets a pod spec lists in ``imagePullSecrets`` are read, one ``get`` each (never a
list of Secrets), and only their ``kubernetes.io/dockerconfigjson`` / ``kubernetes.io/dockercfg``
payload. What comes out stays in memory: ``PullCredential`` hides its secrets from ``repr``, the
audit hands them to the registry source for their own registry only
(``SourceOptions.registry_credentials``), and nothing is written to the inventory, a report, the
cache or a log. A Secret that cannot be read (403, missing, malformed) is a warning naming it,
never its content.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from imagelint.cluster.connection import Connection, status_text
from imagelint.cluster.resources import SECRETS
from imagelint.untrusted import loads_json

MAX_SECRET_BYTES = 1 << 20
_HUB_KEYS = {"https://index.docker.io/v1/", "index.docker.io", "docker.io", "registry-1.docker.io", "https://index.docker.io/v1"}


@dataclass(frozen=True)
class PullCredential:
    """One registry's credentials from one pull secret."""

    registry: str  # normalised like image names: host[:port], "docker.io" for Docker Hub
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    identity_token: str | None = field(default=None, repr=False)


def _registry_key(server: str) -> str:
    text = server.strip()
    if text in _HUB_KEYS:
        return "docker.io"
    for prefix in ("https://", "http://"):
        if text.startswith(prefix):
            text = text[len(prefix):]
    host = text.split("/", 1)[0].lower()
    return "docker.io" if host in _HUB_KEYS else host


def parse_docker_config(payload: bytes, legacy: bool) -> list[PullCredential]:
    """A ``.dockerconfigjson`` (``{"auths": {...}}``) or legacy ``.dockercfg`` (the auths map itself)."""
    data = loads_json(payload.decode("utf-8"))
    auths = data if legacy else data.get("auths") if isinstance(data, dict) else None
    out = []
    for server, entry in (auths or {}).items() if isinstance(auths, dict) else ():
        if not isinstance(server, str) or not isinstance(entry, dict):
            continue
        user, password = entry.get("username"), entry.get("password")
        if isinstance(entry.get("auth"), str) and entry["auth"]:
            user, _, password = base64.b64decode(entry["auth"], validate=True).decode("utf-8").partition(":")
        token = entry.get("identitytoken") if isinstance(entry.get("identitytoken"), str) else None
        if isinstance(user, str) and user and (isinstance(password, str) or token):
            out.append(PullCredential(_registry_key(server), user, password if isinstance(password, str) else None, token))
    return out


def read_pull_secrets(
    conn: Connection, names: Iterable[tuple[str, str]], warnings: list[str]
) -> dict[tuple[str, str], tuple[PullCredential, ...]]:
    """(namespace, secret name) → its credentials, for each secret named."""
    out: dict[tuple[str, str], tuple[PullCredential, ...]] = {}
    for namespace, name in sorted(set(names)):
        fetched = conn.get_object(SECRETS, name, namespace, optional=True, step=f"reading pull secret {namespace}/{name}")
        if not fetched.checked or fetched.object is None:
            warnings.append(f"pull secret {namespace}/{name}: not readable ({status_text(fetched.refused or 0)}); "
                            "images that need it are read without it")
            continue
        secret: Mapping[str, Any] = fetched.object
        kind = secret.get("type")
        data = d if isinstance(d := secret.get("data"), Mapping) else {}
        key = {"kubernetes.io/dockerconfigjson": ".dockerconfigjson", "kubernetes.io/dockercfg": ".dockercfg"}.get(str(kind))
        encoded = data.get(key) if key else None
        try:
            if not isinstance(encoded, str) or len(encoded) > MAX_SECRET_BYTES:
                raise ValueError("no docker config in it")
            out[(namespace, name)] = tuple(parse_docker_config(base64.b64decode(encoded, validate=True), key == ".dockercfg"))
        except (ValueError, TypeError, UnicodeDecodeError, binascii.Error):
            warnings.append(f"pull secret {namespace}/{name}: not an image pull secret imagelint can read; ignored")
    return out


__all__ = ["PullCredential", "parse_docker_config", "read_pull_secrets"]
