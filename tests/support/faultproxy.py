"""A fault-injecting HTTP proxy in front of a real registry, for retry and redirect tests.

    proxy = FaultProxy(registry.url, verify=registry.verify)
    proxy.add(Fault("503", "/manifests/", times=2))       # two 503s, then forward
    proxy.add(Fault("429", "/manifests/", retry_after="1"))
    proxy.add(Fault("reset", "/blobs/"))                  # headers + half the body, then close
    proxy.add(Fault("stall", "/manifests/", stall_seconds=2))
    proxy.add(Fault("redirect", "/blobs/"))               # 307 to a storage host on 127.0.0.2
    ...
    proxy.stop()

It listens on plain HTTP (clients name it in ``insecure_registries``) and
forwards everything else unchanged, auth challenges included, so the client
talks to the real registry through it. ``requests`` records what the proxy
saw; ``storage.seen`` records, per request to the redirect target, whether it
carried an ``Authorization`` header.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import requests

from tests.support.registry import free_port

_HOP_HEADERS = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "host", "content-length",
                "proxy-authorization", "proxy-connection"}


@dataclass
class Fault:
    """``action``: ``429``, ``503`` (or any ``status``), ``reset``, ``rst``, ``stall``, ``redirect``.

    ``reset`` sends the headers and half the body, then closes (FIN, then RST);
    ``rst`` sends the same half and resets at once, so the client usually sees
    ``ECONNRESET`` before reading anything.

    Applies to requests whose path contains ``path_contains``, ``times`` times
    (-1: always).
    """

    action: str
    path_contains: str = ""
    times: int = 1
    retry_after: str | None = None
    stall_seconds: float = 2.0
    status: int = 503


@dataclass(frozen=True)
class SeenRequest:
    method: str
    path: str
    authorization: str | None
    range: str | None
    outcome: str  # "forwarded" or the fault action


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class StorageHost:
    """A stand-in for blob storage on another host (e.g. 127.0.0.2) that serves stashed bytes."""

    def __init__(self, host: str = "127.0.0.2") -> None:
        self.blobs: dict[str, bytes] = {}
        self.seen: list[tuple[str, str | None]] = []  # (path, Authorization header)
        self.port = free_port(host)
        self.host = f"{host}:{self.port}"
        storage = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                storage.seen.append((self.path, self.headers.get("Authorization")))
                data = storage.blobs.get(self.path.split("?")[0].rsplit("/", 1)[-1])
                status = 200 if data is not None else 404
                body = data if data is not None else b"not found"
                self.send_response(status)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._httpd = _Server((host, self.port), Handler)
        threading.Thread(target=self._httpd.serve_forever, args=(0.05,), name="storage-host", daemon=True).start()

    def stash(self, data: bytes) -> str:
        key = uuid.uuid4().hex
        self.blobs[key] = data
        return f"http://{self.host}/storage/{key}?X-Signature=presigned-{key[:8]}"

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


class FaultProxy:
    def __init__(self, upstream: str, verify: bool | str = True, storage_host: str = "127.0.0.2") -> None:
        self.upstream = upstream.rstrip("/")
        self.verify = verify
        self.faults: list[Fault] = []
        self.requests: list[SeenRequest] = []
        self._lock = threading.Lock()
        self.storage = StorageHost(storage_host)
        self.port = free_port()
        self.host = f"127.0.0.1:{self.port}"
        self.url = f"http://{self.host}"
        self._session = requests.Session()
        self._httpd = _Server(("127.0.0.1", self.port), self._handler())
        threading.Thread(target=self._httpd.serve_forever, args=(0.05,), name="fault-proxy", daemon=True).start()

    def add(self, fault: Fault) -> Fault:
        with self._lock:
            self.faults.append(fault)
        return fault

    def clear(self) -> None:
        with self._lock:
            self.faults.clear()
            self.requests.clear()

    def seen(self, path_contains: str = "") -> list[SeenRequest]:
        with self._lock:
            return [r for r in self.requests if path_contains in r.path]

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self.storage.stop()

    def _take_fault(self, path: str) -> Fault | None:
        with self._lock:
            for fault in self.faults:
                if fault.times != 0 and fault.path_contains in path:
                    if fault.times > 0:
                        fault.times -= 1
                    return fault
        return None

    def _forward(self, method: str, path: str, headers: dict[str, str], body: bytes | None) -> requests.Response:
        out = {k: v for k, v in headers.items() if k.lower() not in _HOP_HEADERS}
        return self._session.request(method, self.upstream + path, headers=out, data=body, verify=self.verify,
                                     allow_redirects=False, timeout=30)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, headers: dict[str, str], body: bytes, head: bool = False) -> None:
                self.send_response(status)
                for k, v in headers.items():
                    if k.lower() not in _HOP_HEADERS and k.lower() != "content-encoding":
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if not head:
                    self.wfile.write(body)

            def _record(self, outcome: str) -> None:
                with proxy._lock:
                    proxy.requests.append(SeenRequest(self.command, self.path, self.headers.get("Authorization"),
                                                      self.headers.get("Range"), outcome))

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = dict(self.headers.items())
                fault = proxy._take_fault(self.path)
                self._record(fault.action if fault else "forwarded")
                head = self.command == "HEAD"
                if fault is None:
                    r = proxy._forward(self.command, self.path, headers, body)
                    self._send(r.status_code, dict(r.headers), r.content, head)
                elif fault.action == "stall":
                    time.sleep(fault.stall_seconds)
                    self.close_connection = True
                    try:
                        r = proxy._forward(self.command, self.path, headers, body)
                        self._send(r.status_code, dict(r.headers), r.content, head)
                    except OSError:
                        pass  # the client gave up waiting, as intended
                elif fault.action in ("reset", "rst"):
                    r = proxy._forward(self.command, self.path, headers, body)
                    data = r.content
                    self.send_response(r.status_code)
                    for k, v in r.headers.items():
                        if k.lower() not in _HOP_HEADERS:
                            self.send_header(k, v)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data[: len(data) // 2])
                    self.wfile.flush()
                    if fault.action == "reset":
                        # FIN after half the body: the client gets those bytes, then a short read.
                        self.connection.shutdown(socket.SHUT_WR)
                        time.sleep(0.05)
                    # Then RST (linger 0): for "rst" the client typically loses even the buffered half.
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.close_connection = True
                elif fault.action == "redirect":
                    r = proxy._forward(self.command, self.path, headers, body)
                    if r.status_code != 200:
                        self._send(r.status_code, dict(r.headers), r.content, head)
                        return
                    location = proxy.storage.stash(r.content)
                    self._send(307, {"Location": location, "Content-Type": "text/plain"}, b"", head)
                else:
                    status = 429 if fault.action == "429" else int(fault.action) if fault.action.isdigit() else fault.status
                    extra = {"Content-Type": "application/json"}
                    if fault.retry_after is not None:
                        extra["Retry-After"] = fault.retry_after
                    code = "TOOMANYREQUESTS" if status == 429 else "UNAVAILABLE"
                    body_out = f'{{"errors":[{{"code":"{code}","message":"injected by the fault proxy"}}]}}'.encode()
                    self._send(status, extra, body_out, head)

            do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = _handle  # noqa: N815

        return Handler
