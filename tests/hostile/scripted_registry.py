"""A registry that says exactly what a test scripts: arbitrary bytes, statuses and headers.

The real registry (tests/support/registry.py) refuses to store most hostile documents
(bad JSON, wrong media types, huge manifests) and always sends a challenge with its
401; this threaded HTTP server on 127.0.0.1 answers ``GET/HEAD`` by path with what a
test put in ``routes``, so the client's handling of those answers can be tested.

    reg = ScriptedRegistry()
    reg.routes["/v2/a/manifests/t"] = Reply(200, b"[1,2]", {"Content-Type": OCI_MANIFEST})
    ...  reg.host  ...  reg.seen (path, Authorization) per request  ...  reg.stop()

``reg.headers`` keeps every request's full headers (cookies, auth) in order; a ``Reply``
with ``drip`` sends its body one byte per ``drip`` seconds (a registry that never quite
stalls).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.support.registry import free_port


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    drip: float = 0.0


class ScriptedRegistry:
    def __init__(self) -> None:
        self.routes: dict[str, Reply] = {"/v2/": Reply(200, b"{}", {"Content-Type": "application/json"})}
        self.default = Reply(404, b'{"errors":[{"code":"NAME_UNKNOWN","message":"not scripted"}]}',
                             {"Content-Type": "application/json"})
        self.seen: list[tuple[str, str | None]] = []
        self.headers: list[tuple[str, dict[str, str]]] = []
        self.dripped: dict[str, int] = {}  # path -> bytes of a dripped body sent so far
        self.port = free_port()
        self.host = f"127.0.0.1:{self.port}"
        scripted = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _answer(self) -> None:
                path = self.path.split("?")[0]
                scripted.seen.append((path, self.headers.get("Authorization")))
                scripted.headers.append((path, dict(self.headers.items())))
                reply = scripted.routes.get(path, scripted.default)
                self.send_response(reply.status)
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                if self.command != "HEAD":
                    try:
                        if reply.drip:
                            for i in range(len(reply.body)):
                                self.wfile.write(reply.body[i:i + 1])
                                self.wfile.flush()
                                scripted.dripped[path] = i + 1
                                time.sleep(reply.drip)
                        else:
                            self.wfile.write(reply.body)
                    except OSError:
                        pass  # the client stopped reading (e.g. a document over its size limit)

            do_GET = do_HEAD = _answer  # noqa: N815

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address) -> None:  # type: ignore[no-untyped-def]
                pass  # clients that hang up early (limits, retries) are the point of these tests

        self._httpd = Server(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self._httpd.serve_forever, args=(0.05,), name="scripted-registry", daemon=True).start()

    def manifest(self, repo: str, ref: str, body: bytes, media_type: str, **headers: str) -> None:
        self.routes[f"/v2/{repo}/manifests/{ref}"] = Reply(200, body, {"Content-Type": media_type, **headers})

    def blob(self, repo: str, digest: str, body: bytes) -> None:
        self.routes[f"/v2/{repo}/blobs/{digest}"] = Reply(200, body, {"Content-Type": "application/octet-stream"})

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
