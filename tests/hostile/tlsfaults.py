"""TLS servers with bad certificates: expired, for another host, or from an unknown CA.

A test CA (``cryptography``) signs each leaf, so a client that trusts the CA sees
exactly one problem: the expiry, or the name. The server is a plain threaded HTTPS
server on 127.0.0.1 answering ``/v2/`` — the handshake fails before any request.
"""

from __future__ import annotations

import datetime
import ssl
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from ipaddress import IPv4Address
from pathlib import Path

from tests.support.registry import free_port


@dataclass(frozen=True)
class Pem:
    cert: str
    key: str


def _write(workdir: Path, name: str, cert, key) -> Pem:  # type: ignore[no-untyped-def]
    from cryptography.hazmat.primitives import serialization

    c, k = workdir / f"{name}.crt", workdir / f"{name}.key"
    c.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    k.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption()))
    return Pem(str(c), str(k))


def make_certs(workdir: Path) -> dict[str, Pem]:
    """``ca``, ``expired`` (SAN 127.0.0.1, expired yesterday) and ``wrong-host`` (SAN wrong.example only)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    workdir.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "imagelint hostile test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=30))
          .not_valid_after(now + datetime.timedelta(days=30))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    out = {"ca": _write(workdir, "ca", ca, ca_key)}

    def leaf(name: str, sans: list, not_before: datetime.datetime, not_after: datetime.datetime) -> Pem:
        key = ec.generate_private_key(ec.SECP256R1())
        cert = (x509.CertificateBuilder()
                .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])).issuer_name(ca_name)
                .public_key(key.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(not_before).not_valid_after(not_after)
                .add_extension(x509.SubjectAlternativeName(sans), critical=False)
                .sign(ca_key, hashes.SHA256()))
        return _write(workdir, name, cert, key)

    here = [x509.IPAddress(IPv4Address("127.0.0.1")), x509.DNSName("localhost")]
    out["expired"] = leaf("expired", here, now - datetime.timedelta(days=20), now - datetime.timedelta(days=1))
    out["wrong-host"] = leaf("wrong-host", [x509.DNSName("wrong.example")], now - datetime.timedelta(days=1),
                             now + datetime.timedelta(days=10))
    out["good"] = leaf("good", here, now - datetime.timedelta(days=1), now + datetime.timedelta(days=10))
    return out


class TlsServer:
    def __init__(self, pem: Pem) -> None:
        self.port = free_port()
        self.host = f"127.0.0.1:{self.port}"

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                body = b"{}"
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address) -> None:  # type: ignore[no-untyped-def]
                pass  # failed handshakes are the point

        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(pem.cert, pem.key)
        self._httpd = Server(("127.0.0.1", self.port), Handler)
        self._httpd.socket = ctx.wrap_socket(self._httpd.socket, server_side=True, do_handshake_on_connect=False)
        threading.Thread(target=self._httpd.serve_forever, args=(0.05,), name="tls-fault", daemon=True).start()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
