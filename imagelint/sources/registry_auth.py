"""Registry credentials and the distribution auth challenge (Basic and Bearer tokens).

Credentials come from the Docker client's config (``config.json`` in
``options.docker_config``, ``$DOCKER_CONFIG`` or ``~/.docker``): ``auths``
(base64 ``auth`` or ``identitytoken``), ``credsStore`` and ``credHelpers``, read as
docker-py reads them (``imagelint.sources.docker_config``), with the
``docker-credential-*`` helpers run bounded in time and output.

Tokens follow the Docker token spec: anonymous first, then on a 401 the
``WWW-Authenticate: Bearer realm=...,service=...,scope=...`` challenge is
answered by a GET to the realm (basic credentials when known) or, with an
identity token, an OAuth2 ``refresh_token`` POST. Tokens are cached for the
process per registry + realm + service + scope + user, until ``expires_in``.

Secrets never enter messages: every secret this module handles is registered
with a ``Redactor`` that the registry client runs over any text it reports.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from urllib.parse import urlencode, urlsplit

from imagelint.deadline import DeadlineExceeded, bounded
from imagelint.deadline import message as deadline_message
from imagelint.errors import ConfigError, RegistryError
from imagelint.lazyre import lazy_pattern
from imagelint.sources.docker_config import (
    auths_entry,
    config_key,
    credential_store,
    find_docker_config,
    read_docker_config,
)
from imagelint.sources.http import (
    BodyError,
    HttpTransport,
    TransportFailure,
    basic_authorization,
    read_capped,
)
from imagelint.untrusted import loads_json

DEFAULT_TOKEN_LIFETIME = 60  # seconds, per the token spec when expires_in is absent
TOKEN_EXPIRY_MARGIN = 5  # refresh a little early so a token does not expire mid-request
CLIENT_ID = "imagelint"
MAX_TOKEN_RESPONSE_BYTES = 256 * 1024  # a token response is a small JSON object; JWTs run to a few KB


@dataclass(frozen=True)
class Credentials:
    """What the Docker config holds for one registry. ``repr`` hides the secrets."""

    username: str | None = field(default=None)
    password: str | None = field(default=None, repr=False)
    identity_token: str | None = field(default=None, repr=False)

    @property
    def has_basic(self) -> bool:
        return bool(self.username) and self.password is not None

    def basic_header(self) -> str:
        return basic_authorization(str(self.username), str(self.password))

    def secrets(self) -> tuple[str, ...]:
        out = [s for s in (self.password, self.identity_token) if s]
        if self.has_basic:
            out.append(self.basic_header().split(" ", 1)[1])
        return tuple(out)


class Redactor:
    """Replaces every registered secret in a text with ``***``."""

    def __init__(self) -> None:
        self._secrets: set[str] = set()

    def add(self, *secrets: str | None) -> None:
        for s in secrets:
            if s and len(s) >= 3:  # shorter strings would shred ordinary words
                self._secrets.add(s)

    def __call__(self, text: str) -> str:
        for s in sorted(self._secrets, key=len, reverse=True):
            text = text.replace(s, "***")
        return text


def load_credentials(registry: str, docker_config: str | None = None, timeout: float = 30.0) -> Credentials | None:
    """Credentials for ``registry`` (a normalised name, e.g. ``docker.io``) or None.

    ``docker_config`` is a directory; when given it is the only place looked at.
    A malformed config is a ConfigError (exit 2); a failing, hanging (``timeout``
    seconds) or flooding credential helper is a RegistryError (exit 3). Neither
    message carries a secret.
    """
    config = read_docker_config(find_docker_config(docker_config))
    store = credential_store(config, registry)
    if store:
        # The helper's call is bounded in time and output (docker-py's had neither bound).
        if not isinstance(store, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", store):
            raise ConfigError("docker config: a credential helper name is not a plain program name", path=config.path or "docker config")
        entry = _helper_credentials(store, registry, timeout)
    else:
        entry = auths_entry(config, registry)
    if not entry:
        return None
    # auths entries use lower-case keys, credential stores capitalised ones.
    username = entry.get("username") or entry.get("Username")
    password = entry.get("password") or entry.get("Password")
    identity_token = entry.get("IdentityToken") or entry.get("identitytoken")
    if not (username or identity_token):
        return None
    return Credentials(username or None, password, identity_token or None)


_TOKEN_USERNAME = "<token>"  # what a helper returns as Username for an identity token


def _helper_credentials(store: str, registry: str, timeout: float) -> dict[str, str] | None:
    """``docker-credential-STORE get`` for ``registry``, bounded in time and output."""
    import shutil

    from imagelint.subprocess_bounded import HelperFailure, one_line, run_bounded

    program = f"docker-credential-{store}"
    what = f"registry {registry}: credential helper {program}"
    exe = shutil.which(program)
    if exe is None:
        raise RegistryError(f"{what} is not installed or not on PATH")
    try:
        result = run_bounded([exe, "get"], config_key(registry).encode(), timeout=bounded(timeout))
    except HelperFailure as failure:
        raise RegistryError(f"{what} failed: {failure.detail}") from None
    if result.returncode != 0:
        said = one_line(result.stdout + b" " + result.stderr)
        if "credentials not found" in said.lower():
            return None
        raise RegistryError(f"{what} exited with status {result.returncode}")
    try:
        doc = loads_json(result.stdout)
    except (ValueError, UnicodeDecodeError):
        doc = None
    if not isinstance(doc, dict) or not isinstance(doc.get("Username", ""), str) or not isinstance(doc.get("Secret", ""), str):
        raise RegistryError(f"{what} answered something other than a JSON object with Username and Secret")
    username, secret = doc.get("Username", ""), doc.get("Secret", "")
    if not username and not secret:
        return None
    if username == _TOKEN_USERNAME:
        return {"IdentityToken": secret}
    return {"Username": username, "Password": secret}


# --- WWW-Authenticate ------------------------------------------------------------------------

_PARAM_RE = lazy_pattern(r'\s*([A-Za-z][\w-]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))\s*,?')


@dataclass(frozen=True)
class Challenge:
    """One challenge of a registry's ``WWW-Authenticate`` header: its scheme and parameters (realm...)."""

    scheme: str  # lower-case: "bearer" or "basic"
    params: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))


def parse_challenges(header: str | None) -> list[Challenge]:
    """Parse ``WWW-Authenticate`` (one or more challenges, quoted or token params)."""
    if not header:
        return []
    out: list[Challenge] = []
    rest = header.strip()
    while rest:
        m = re.match(r"([A-Za-z][\w-]*)\s*", rest)
        if not m:
            break
        scheme = m.group(1).lower()
        rest = rest[m.end():]
        params: dict[str, str] = {}
        while True:
            pm = _PARAM_RE.match(rest)
            # A bare word without '=' starts the next challenge.
            if not pm:
                break
            value = pm.group(2) if pm.group(2) is not None else pm.group(3)
            params[pm.group(1).lower()] = re.sub(r"\\(.)", r"\1", value)
            rest = rest[pm.end():]
        out.append(Challenge(scheme, MappingProxyType(params)))
        rest = rest.lstrip(", ")
    return out


# --- token cache ---------------------------------------------------------------------------


@dataclass(frozen=True)
class CachedToken:
    """A bearer token kept in this process's memory until shortly before it expires (monotonic clock)."""

    token: str = field(repr=False)
    expires_at: float


_TOKENS: dict[tuple[str, ...], CachedToken] = {}
_TOKENS_LOCK = threading.Lock()


def token_cache_key(registry: str, realm: str, service: str, scope: str, user: str) -> tuple[str, ...]:
    return (registry, realm, service, scope, user)


def cached_token(key: tuple[str, ...]) -> str | None:
    with _TOKENS_LOCK:
        hit = _TOKENS.get(key)
        if hit and hit.expires_at > time.monotonic():
            return hit.token
        _TOKENS.pop(key, None)
        return None


def store_token(key: tuple[str, ...], token: str, expires_in: int | float | None) -> None:
    lifetime = expires_in if isinstance(expires_in, (int, float)) and not isinstance(expires_in, bool) and expires_in > 0 else DEFAULT_TOKEN_LIFETIME
    with _TOKENS_LOCK:
        _TOKENS[key] = CachedToken(token, time.monotonic() + max(0.0, lifetime - TOKEN_EXPIRY_MARGIN))


def forget_token(key: tuple[str, ...]) -> None:
    with _TOKENS_LOCK:
        _TOKENS.pop(key, None)


def clear_token_cache() -> None:
    """Drop every cached token (tests; a long-lived process after a credential change)."""
    with _TOKENS_LOCK:
        _TOKENS.clear()


# --- answering a challenge -------------------------------------------------------------------


class Authenticator:
    """Holds the Authorization header for one registry + repository and renews it on a 401.

    ``where`` prefixes every error ("registry HOST, repository REPO"). Anonymous
    until the registry asks; after a Basic challenge the credentials are sent
    with every request to that registry (never to a redirect target: the
    transport strips them on a host change).
    """

    def __init__(
        self,
        registry: str,
        repository: str,
        credentials: Credentials | None,
        transport: HttpTransport,
        redact: Redactor,
        where: str,
    ) -> None:
        self.registry = registry
        self.repository = repository
        self.credentials = credentials
        self.header: str | None = None
        self._transport = transport
        self._redact = redact
        self._where = where
        self._token_key: tuple[str, ...] | None = None
        if credentials:
            redact.add(*credentials.secrets())
        # A token this process already holds for this registry + scope + user is sent up front,
        # so a repeated read does not pay the 401 round trip again.
        held = cached_token(self._held_key())
        if held:
            self.header = "Bearer " + held

    def _user(self) -> str:
        creds = self.credentials
        return (creds.username or "<identity-token>") if creds else ""

    def _held_key(self) -> tuple[str, ...]:
        return token_cache_key(self.registry, "*", "*", self.scope, self._user())

    @property
    def scope(self) -> str:
        return f"repository:{self.repository}:pull"

    def headers(self) -> dict[str, str]:
        return {"Authorization": self.header} if self.header else {}

    def answer(self, www_authenticate: str | None, step: str) -> bool:
        """Set a header that answers the challenge; False when there is nothing new to try."""
        challenges = parse_challenges(www_authenticate)
        bearer = next((c for c in challenges if c.scheme == "bearer"), None)
        basic = next((c for c in challenges if c.scheme == "basic"), None)
        if bearer is not None and bearer.params.get("realm"):
            if self.header and self.header.startswith("Bearer "):
                # The registry refused a token we already had (expired, revoked): fetch once more.
                forget_token(self._held_key())
                if self._token_key:
                    forget_token(self._token_key)
                previous = self.header
                self.header = "Bearer " + self._token(bearer)
                return self.header != previous
            self.header = "Bearer " + self._token(bearer)
            return True
        if basic is not None:
            if self.credentials is None or not self.credentials.has_basic or self.header:
                return False
            self.header = self.credentials.basic_header()
            return True
        return False

    def _token(self, challenge: Challenge) -> str:
        realm = challenge.params["realm"]
        service = challenge.params.get("service", "")
        key = token_cache_key(self.registry, realm, service, self.scope, self._user())
        hit = cached_token(key)
        if hit:
            self._token_key = key
            return hit
        token, expires_in = self._fetch_token(realm, service)
        self._redact.add(token)
        store_token(key, token, expires_in)
        store_token(self._held_key(), token, expires_in)
        self._token_key = key
        return token

    def _fetch_token(self, realm: str, service: str) -> tuple[str, int | float | None]:
        step = "fetching token"
        if urlsplit(realm).scheme not in ("http", "https"):
            raise RegistryError(f"{self._where}: {step}: the token realm is not an http(s) URL")
        params = {"scope": self.scope}
        if service:
            params["service"] = service
        creds = self.credentials
        try:
            if creds and creds.identity_token:
                # OAuth2 refresh-token grant, as `docker login` identity tokens require.
                form = {**params, "grant_type": "refresh_token", "refresh_token": creds.identity_token,
                        "client_id": CLIENT_ID}
                response = self._transport.request("POST", realm, {"Accept": "application/json"}, data=form)
            else:
                headers = {"Accept": "application/json"}
                if creds and creds.has_basic:
                    headers["Authorization"] = creds.basic_header()
                sep = "&" if "?" in realm else "?"
                response = self._transport.request("GET", f"{realm}{sep}{urlencode(params)}", headers)
        except TransportFailure as failure:
            if failure.kind == "deadline":
                raise DeadlineExceeded(f"{self._where}: {step} from {_host(realm)}: {deadline_message()}") from None
            raise RegistryError(self._redact(f"{self._where}: {step} from {_host(realm)}: {failure.kind} error: {failure.detail}")) from None
        with response:
            status = response.status_code
            try:
                body = read_capped(response, MAX_TOKEN_RESPONSE_BYTES) if status == 200 else b""
            except BodyError as exc:
                raise RegistryError(f"{self._where}: {step} from {_host(realm)}: {exc.detail}") from None
            except DeadlineExceeded as exc:
                raise DeadlineExceeded(f"{self._where}: {step} from {_host(realm)}: {exc.message}") from None
            except (OSError, ValueError) as exc:  # the transport's ConnectionLost is an OSError
                raise RegistryError(f"{self._where}: {step} from {_host(realm)}: connection lost while reading the "
                                    f"response ({type(exc).__name__})") from None
        if status in (401, 403):
            who = "the credentials were rejected" if creds else "anonymous access was refused (no credentials in the docker config)"
            raise RegistryError(f"{self._where}: {step} from {_host(realm)}: HTTP {status}: {who}")
        if status != 200:
            raise RegistryError(f"{self._where}: {step} from {_host(realm)}: HTTP {status}")
        try:
            doc = loads_json(body)
        except (ValueError, UnicodeDecodeError):
            doc = None
        token = None
        if isinstance(doc, dict):
            token = doc.get("token") or doc.get("access_token")
        if not isinstance(token, str) or not token.strip():
            raise RegistryError(f"{self._where}: {step} from {_host(realm)}: the response holds no token (expected JSON with 'token' or 'access_token')")
        expires_in = doc.get("expires_in") if isinstance(doc, dict) else None
        return token.strip(), expires_in if isinstance(expires_in, (int, float)) else None


def _host(url: str) -> str:
    return urlsplit(url).netloc or url[:60]
