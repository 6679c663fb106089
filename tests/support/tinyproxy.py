"""A real forward proxy for tests: Debian's ``tinyproxy`` on 127.0.0.1, started and stopped by PID.

    proxy = start_tinyproxy(tmp / "proxy", connect_ports=(registry_port,), basic_auth=("u", "p"))
    ... proxy.url() / proxy.url("u", "p") ... proxy.requests() ... proxy.stop()

Its configuration file is the test's own: it listens on loopback only, allows ``CONNECT``
to the given ports only, and with ``basic_auth`` answers 407 to requests without those
credentials. ``requests()`` reads the request lines it logged (``GET http://host/v2/ HTTP/1.1``,
``CONNECT host:port HTTP/1.1``), so a test can tell what went through it.

tinyproxy listens in plain TCP only; ``TlsFront(proxy.host, context)`` puts TLS in front of it
(a relay on loopback, each byte passed on as it comes), which makes it an ``https://`` proxy.
"""

from __future__ import annotations

import select
import shutil
import signal
import socket
import ssl
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable
from urllib.parse import quote

from tests.support.registry import free_port

TINYPROXY = "tinyproxy"


class ProxyUnavailable(Exception):
    pass


@dataclass
class Tinyproxy:
    host: str  # 127.0.0.1:PORT
    log: Path
    process: subprocess.Popen

    def url(self, username: str | None = None, password: str | None = None, scheme: str = "http") -> str:
        auth = f"{quote(username, safe='')}:{quote(password or '', safe='')}@" if username is not None else ""
        return f"{scheme}://{auth}{self.host}"

    def requests(self) -> list[str]:
        """The request lines tinyproxy logged, in order."""
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return [line.split("): ", 1)[1] for line in text.splitlines() if "Request (file descriptor" in line]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_tinyproxy(workdir: Path, connect_ports: Iterable[int] = (), basic_auth: tuple[str, str] | None = None) -> Tinyproxy:
    binary = shutil.which(TINYPROXY)
    if binary is None:
        raise ProxyUnavailable("tinyproxy is not installed (apt-get install tinyproxy)")
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log = workdir / "tinyproxy.log"
    lines = [
        f"Port {port}", "Listen 127.0.0.1", "Timeout 30", "MaxClients 50", "LogLevel Connect",
        f'LogFile "{log}"', f'PidFile "{workdir / "tinyproxy.pid"}"', "Allow 127.0.0.1", "DisableViaHeader Yes",
        *(f"ConnectPort {p}" for p in connect_ports),
    ]
    if basic_auth is not None:
        lines.append(f"BasicAuth {basic_auth[0]} {basic_auth[1]}")
    config = workdir / "tinyproxy.conf"
    config.write_text("\n".join(lines) + "\n")
    process = subprocess.Popen([binary, "-d", "-c", str(config)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    proxy = Tinyproxy(f"127.0.0.1:{port}", log, process)
    for _ in range(200):
        if process.poll() is not None:
            raise ProxyUnavailable(f"tinyproxy exited with {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proxy
        except OSError:
            time.sleep(0.02)
    proxy.stop()
    raise ProxyUnavailable("tinyproxy did not listen within 4 s")


class TlsFront:
    """TLS on 127.0.0.1 (``.host``), relayed in plain TCP to ``target`` (``host:port``)."""

    def __init__(self, target: str, context: ssl.SSLContext) -> None:
        self._target = target.rsplit(":", 1)
        self._context = context
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.host = f"127.0.0.1:{self._listener.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._relay, args=(client,), daemon=True).start()

    def _relay(self, client: socket.socket) -> None:
        try:
            tls = self._context.wrap_socket(client, server_side=True)
        except OSError:
            client.close()
            return
        with tls, socket.create_connection((self._target[0], int(self._target[1]))) as upstream:
            pair = {tls: upstream, upstream: tls}
            while True:
                # Bytes OpenSSL has already decrypted do not make the socket readable again.
                ready = [tls] if tls.pending() else select.select(list(pair), [], [], 30)[0]
                if not ready:
                    return
                for sock in ready:
                    try:
                        data = sock.recv(65536)
                    except OSError:
                        return
                    if not data:
                        return
                    pair[sock].sendall(data)

    def stop(self) -> None:
        self._listener.close()
