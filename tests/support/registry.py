"""Real registries for tests: Debian's ``docker-registry`` (distribution 2.8) on 127.0.0.1.

Three variants, each in its own temp dir on a free port, started and stopped by PID:

    plain  = start_registry(tmp / "plain")                       # HTTP, anonymous
    tls    = start_registry(tmp / "tls", "tls", ca=ca)           # TLS + htpasswd basic auth
    token  = start_registry(tmp / "token", "token", ca=ca)       # TLS + bearer tokens from TokenServer

``ca = make_ca(tmp)`` makes one self-signed certificate with ``openssl`` (SAN
DNS:localhost, IP:127.0.0.1) that the TLS servers present and clients trust via
``ca.cert``. Every server has ``.host`` (``127.0.0.1:PORT``), ``.url``,
``.push(repo, tag, built)`` (``tests.support.imagebuilder.push_image`` with the
right auth) and ``.blob_path(digest)`` (the file the filesystem driver serves,
for corruption tests). ``TokenServer`` is the tests' own token service: RS256
JWTs with an ``x5c`` header, honouring requested scopes and basic credentials,
counting what it was asked.
"""

from __future__ import annotations

import base64
import datetime
import json
import shutil
import socket
import ssl
import subprocess
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable
from urllib.parse import parse_qs, urlsplit

import requests

from tests.support.imagebuilder import BuiltImage, BuiltIndex, push_image

REGISTRY_BINARY = "docker-registry"
TOKEN_SERVICE = "imagelint-test-registry"
TOKEN_ISSUER = "imagelint-test-token-issuer"
DEFAULT_USER = "alice"
DEFAULT_PASSWORD = "pa55-w0rd-f0r-tests"  # distinctive so tests can search messages for it
DEFAULT_IDENTITY_TOKEN = "identity-token-f0r-tests-7c1e"


def registry_binary() -> str | None:
    return shutil.which(REGISTRY_BINARY)


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


@dataclass(frozen=True)
class TestCA:
    """A self-signed certificate used both as the servers' certificate and as the clients' CA."""

    cert: str
    key: str


def make_ca(workdir: Path) -> TestCA:
    workdir.mkdir(parents=True, exist_ok=True)
    cert, key = workdir / "tls.crt", workdir / "tls.key"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
         "-days", "30", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
        check=True, capture_output=True,
    )
    return TestCA(str(cert), str(key))


def server_ssl_context(ca: TestCA) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(ca.cert, ca.key)
    return ctx


# --- token server -------------------------------------------------------------------------------


@dataclass(frozen=True)
class TokenRequest:
    method: str
    service: str | None
    scopes: tuple[str, ...]
    user: str | None  # None: anonymous
    grant_type: str | None
    had_password: bool


class TokenServer:
    """A Docker-token-spec service: ``GET /token?service=&scope=`` (+ basic auth) or the OAuth2 POST.

    Grants: a known user gets what it asks for; anonymous gets ``pull`` on
    ``public/*`` only. ``broken[repo] = "garbage" | "500" | "no-token" |
    "access_token"`` makes requests whose scope names ``repo`` misbehave (or, for
    ``access_token``, answer with only that field). ``expires_in`` is sent as given.
    """

    def __init__(self, workdir: Path, ca: TestCA, users: dict[str, str] | None = None,
                 identity_tokens: dict[str, str] | None = None, expires_in: int = 300) -> None:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import rsa
        from cryptography.x509.oid import NameOID

        self.users = users if users is not None else {DEFAULT_USER: DEFAULT_PASSWORD}
        self.identity_tokens = identity_tokens if identity_tokens is not None else {DEFAULT_IDENTITY_TOKEN: DEFAULT_USER}
        self.expires_in = expires_in
        self._ca_cert = ca.cert
        self.broken: dict[str, str] = {}
        self.requests: list[TokenRequest] = []
        self._lock = threading.Lock()
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "imagelint test token signer")])
        now = datetime.datetime.now(datetime.timezone.utc)
        cert = (
            x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256())
        )
        workdir.mkdir(parents=True, exist_ok=True)
        self.signing_cert = str(workdir / "token-signing.crt")
        Path(self.signing_cert).write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        self._key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption())
        self._x5c = [base64.b64encode(cert.public_bytes(serialization.Encoding.DER)).decode()]
        self.port = free_port()
        self.url = f"https://127.0.0.1:{self.port}/token"
        server = self
        self._httpd = ThreadingHTTPServer(("127.0.0.1", self.port), _make_token_handler(server))
        self._httpd.daemon_threads = True
        self._httpd.socket = server_ssl_context(ca).wrap_socket(self._httpd.socket, server_side=True)
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), name="token-server", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def requests_for(self, repository: str) -> list[TokenRequest]:
        with self._lock:
            return [r for r in self.requests if any(s.split(":")[1:2] == [repository] for s in r.scopes)]

    def issue(self, user: str | None, scopes: tuple[str, ...]) -> str:
        import jwt

        access = []
        for scope in scopes:
            parts = scope.split(":")
            if len(parts) < 3 or parts[0] != "repository":
                continue
            repo, wanted = ":".join(parts[1:-1]), parts[-1].split(",")
            if user is not None:
                granted = [a for a in wanted if a in ("pull", "push", "delete", "*")]
            else:
                granted = ["pull"] if repo.startswith("public/") and "pull" in wanted else []
            access.append({"type": "repository", "name": repo, "actions": granted})
        now = int(time.time())
        claims = {"iss": TOKEN_ISSUER, "sub": user or "", "aud": TOKEN_SERVICE, "exp": now + self.expires_in,
                  "nbf": now - 10, "iat": now, "jti": uuid.uuid4().hex, "access": access}
        return jwt.encode(claims, self._key_pem, algorithm="RS256", headers={"x5c": self._x5c})

    def headers_for(self, user: str = DEFAULT_USER, password: str = DEFAULT_PASSWORD) -> Callable[[str], dict]:
        """The ``headers(scope)`` callable ``push_image`` takes (goes through the real endpoint)."""

        def headers(scope: str) -> dict:
            r = requests.get(self.url, params={"service": TOKEN_SERVICE, "scope": scope}, auth=(user, password),
                             verify=self._ca_cert, timeout=10)
            r.raise_for_status()
            return {"Authorization": "Bearer " + r.json()["token"]}

        return headers


def _make_token_handler(server: TokenServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:  # keep test output quiet
            pass

        def _reply(self, status: int, body: bytes, content_type: str = "application/json") -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _basic_user(self) -> tuple[str | None, bool, bool]:
            """(user, had_password, rejected)."""
            header = self.headers.get("Authorization") or ""
            if not header.startswith("Basic "):
                return None, False, False
            try:
                user, _, password = base64.b64decode(header[6:]).decode().partition(":")
            except (ValueError, UnicodeDecodeError):
                return None, True, True
            if server.users.get(user) != password:
                return None, True, True
            return user, True, False

        def _handle(self, params: dict[str, list[str]], user: str | None, had_password: bool, rejected: bool,
                    grant_type: str | None) -> None:
            scopes = tuple(s for v in params.get("scope", []) for s in v.split(" ") if s)
            with server._lock:
                server.requests.append(TokenRequest(self.command, (params.get("service") or [None])[0], scopes, user,
                                                    grant_type, had_password))
            if rejected:
                self._reply(401, b'{"details":"invalid credentials"}')
                return
            mode = next((server.broken[s.split(":")[1]] for s in scopes
                         if len(s.split(":")) > 2 and s.split(":")[1] in server.broken), None)
            if mode == "500":
                self._reply(500, b"internal error", "text/plain")
                return
            if mode == "garbage":
                self._reply(200, b"<html>this is not a token</html>", "text/html")
                return
            if mode == "no-token":
                self._reply(200, b'{"expires_in": 300}')
                return
            token = server.issue(user, scopes)
            doc: dict = {"expires_in": server.expires_in, "issued_at": datetime.datetime.now(datetime.timezone.utc).isoformat()}
            if mode == "access_token":
                doc["access_token"] = token
            else:
                doc["token"] = token
            if grant_type == "refresh_token":
                doc["access_token"] = token
            self._reply(200, json.dumps(doc).encode())

        def do_GET(self) -> None:  # noqa: N802
            params = parse_qs(urlsplit(self.path).query)
            user, had_password, rejected = self._basic_user()
            self._handle(params, user, had_password, rejected, None)

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            params = parse_qs(self.rfile.read(length).decode())
            grant = (params.get("grant_type") or [None])[0]
            user = None
            rejected = False
            if grant == "refresh_token":
                user = server.identity_tokens.get((params.get("refresh_token") or [""])[0])
                rejected = user is None
            elif grant == "password":
                name, password = (params.get("username") or [""])[0], (params.get("password") or [""])[0]
                user = name if server.users.get(name) == password else None
                rejected = user is None
            self._handle(params, user, True, rejected, grant)

    return Handler


# --- the registry process ------------------------------------------------------------------


@dataclass
class RegistryServer:
    """A running ``docker-registry``. ``stop()`` ends it by PID."""

    kind: str
    host: str
    url: str
    root: Path
    process: subprocess.Popen
    log_path: Path
    ca_cert: str | None = None
    username: str | None = None
    password: str | None = None
    token_server: TokenServer | None = None
    pushed: list[str] = field(default_factory=list)

    @property
    def verify(self) -> bool | str:
        return self.ca_cert or True

    def auth_headers(self) -> Callable[[str], dict] | None:
        if self.kind == "token" and self.token_server:
            return self.token_server.headers_for(self.username or DEFAULT_USER, self.password or DEFAULT_PASSWORD)
        if self.kind == "tls":
            basic = "Basic " + base64.b64encode(f"{self.username}:{self.password}".encode()).decode()
            return lambda scope: {"Authorization": basic}
        return None

    def push(self, repo: str, tag: str, built: BuiltImage | BuiltIndex) -> str:
        """Push with the plain distribution API; returns the pushed top digest."""
        digest = push_image(self.url, repo, tag, built, headers=self.auth_headers(), verify=self.verify)
        self.pushed.append(f"{repo}:{tag}")
        return digest

    def blob_path(self, digest: str) -> Path:
        algo, hexd = digest.split(":", 1)
        return self.root / "docker" / "registry" / "v2" / "blobs" / algo / hexd[:2] / hexd / "data"

    def docker_config_dir(self, workdir: Path, password: str | None = None, identity_token: str | None = None,
                          host: str | None = None) -> Path:
        """A DOCKER_CONFIG dir whose config.json holds credentials for this registry (or ``host``, e.g. a proxy)."""
        workdir.mkdir(parents=True, exist_ok=True)
        if identity_token:
            entry = {"auth": "", "identitytoken": identity_token}
        else:
            raw = f"{self.username}:{password if password is not None else self.password}".encode()
            entry = {"auth": base64.b64encode(raw).decode()}
        (workdir / "config.json").write_text(json.dumps({"auths": {host or self.host: entry}}))
        return workdir

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        if self.token_server:
            self.token_server.stop()


class RegistryUnavailable(RuntimeError):
    """The registry binary is missing or would not start (tests skip with this reason)."""


def _config_yaml(root: Path, port: int, kind: str, ca: TestCA | None, htpasswd: Path | None,
                 token: TokenServer | None) -> str:
    lines = [
        "version: 0.1",
        "log: {level: error, accesslog: {disabled: true}}",
        f"storage: {{filesystem: {{rootdirectory: {json.dumps(str(root / 'data'))}}}, delete: {{enabled: true}}}}",
        "http:",
        f"  addr: 127.0.0.1:{port}",
        "  secret: imagelint-tests-only",
    ]
    if kind in ("tls", "token") and ca:
        lines += ["  tls:", f"    certificate: {json.dumps(ca.cert)}", f"    key: {json.dumps(ca.key)}"]
    if kind == "tls" and htpasswd:
        lines += ["auth:", "  htpasswd:", "    realm: imagelint-test", f"    path: {json.dumps(str(htpasswd))}"]
    if kind == "token" and token:
        lines += ["auth:", "  token:", f"    realm: {json.dumps(token.url)}", f"    service: {TOKEN_SERVICE}",
                  f"    issuer: {TOKEN_ISSUER}", f"    rootcertbundle: {json.dumps(token.signing_cert)}"]
    return "\n".join(lines) + "\n"


def start_registry(workdir: Path, kind: str = "plain", ca: TestCA | None = None,
                   username: str = DEFAULT_USER, password: str = DEFAULT_PASSWORD) -> RegistryServer:
    """Start ``docker-registry serve`` of the given kind (``plain``, ``tls``, ``token``) and wait until it answers."""
    binary = registry_binary()
    if binary is None:
        raise RegistryUnavailable(f"'{REGISTRY_BINARY}' not found on PATH (apt-get install docker-registry)")
    if kind != "plain" and ca is None:
        raise ValueError(f"a {kind} registry needs a TestCA")
    workdir.mkdir(parents=True, exist_ok=True)
    htpasswd = None
    if kind == "tls":
        out = subprocess.run(["htpasswd", "-Bbn", username, password], check=True, capture_output=True, text=True)
        htpasswd = workdir / "htpasswd"
        htpasswd.write_text(out.stdout)
    token = None
    if kind == "token":
        assert ca is not None
        token = TokenServer(workdir / "token", ca, users={username: password})
    last_log = ""
    for _ in range(3):  # a free port can be taken between our probe and the registry's bind
        port = free_port()
        config = workdir / "config.yml"
        config.write_text(_config_yaml(workdir, port, kind, ca, htpasswd, token))
        log_path = workdir / "registry.log"
        with open(log_path, "wb") as log:
            process = subprocess.Popen([binary, "serve", str(config)], stdout=log, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, start_new_session=True)
        scheme = "http" if kind == "plain" else "https"
        server = RegistryServer(kind, f"127.0.0.1:{port}", f"{scheme}://127.0.0.1:{port}", workdir / "data", process,
                                log_path, ca.cert if ca and kind != "plain" else None,
                                username if kind != "plain" else None, password if kind != "plain" else None, token)
        if _wait_ready(server):
            return server
        last_log = server.log_tail()
        process.kill() if process.poll() is None else None
        process.wait(timeout=5)
    if token:
        token.stop()
    raise RegistryUnavailable(f"docker-registry ({kind}) did not start: {last_log[-600:]}")


def _wait_ready(server: RegistryServer, deadline_s: float = 10.0) -> bool:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            return False
        try:
            r = requests.get(server.url + "/v2/", verify=server.verify, timeout=1)
            if r.status_code in (200, 401):
                return True
        except requests.RequestException:
            pass
        time.sleep(0.05)
    return False


def start_registry_or_skip(tmp_path_factory, kind: str, ca: TestCA | None = None, prefix: str = "registry") -> RegistryServer:
    """For pytest fixtures: start a registry, or skip the test with the reason it cannot run."""
    import pytest

    try:
        return start_registry(tmp_path_factory.mktemp(f"{prefix}-{kind}"), kind, ca=ca)
    except RegistryUnavailable as exc:
        pytest.skip(f"cannot run docker-registry: {exc}")


def make_ca_or_skip(tmp_path_factory, prefix: str = "registry") -> TestCA:
    import pytest

    if registry_binary() is None:
        pytest.skip("docker-registry is not installed (apt-get install docker-registry)")
    return make_ca(tmp_path_factory.mktemp(f"{prefix}-ca"))
