"""imagelint.sources.wire: HTTP/1.1 framing against a loopback peer that sends exactly the bytes given."""

from __future__ import annotations

import socket
import ssl
import threading

import pytest

from imagelint.sources.wire import (
    MAX_HEADERS,
    MAX_INTERIM,
    MAX_LINE,
    HttpProtocolError,
    IncompleteRead,
    RemoteDisconnected,
    WireConnection,
    encode_request,
    host_header,
)
from tests.support.registry import make_ca, server_ssl_context


class _Peer:
    """Accepts connections on loopback; on each, reads one request head per scripted answer, keeps
    it, and sends the answer's bytes (then closes when the script for that connection ends)."""

    def __init__(self, *answers: bytes, close_after: bool = True, host: str = "127.0.0.1",
                 tls: ssl.SSLContext | None = None) -> None:
        self.answers = list(answers)
        self.close_after = close_after
        self.tls = tls
        self.requests: list[bytes] = []
        self.sock = socket.create_server((host, 0))
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        client, _ = self.sock.accept()
        if self.tls is not None:
            try:
                client = self.tls.wrap_socket(client, server_side=True)
            except (OSError, ssl.SSLError):
                client.close()  # the client refused our certificate
                return
        with client:
            buf = b""
            for answer in self.answers:
                while b"\r\n\r\n" not in buf:
                    data = client.recv(65536)
                    if not data:
                        return
                    buf += data
                head, _, buf = buf.partition(b"\r\n\r\n")
                self.requests.append(head)
                client.sendall(answer)
            if not self.close_after:
                client.recv(1)

    def close(self) -> None:
        self.sock.close()


def _exchange(peer: _Peer, method: str = "GET", count: int = 1):
    conn = WireConnection("127.0.0.1", peer.port, 5.0)
    conn.connect()
    responses = []
    for _ in range(count):
        conn.request(method, "/v2/", None, {"Host": "127.0.0.1"})
        response = conn.getresponse()
        responses.append((response, response.read()))
    conn.close()
    peer.close()
    return responses


def test_content_length_body_and_keep_alive() -> None:
    peer = _Peer(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: 1\r\n\r\nhello",
                 b"HTTP/1.1 404 Not Found\r\ncontent-length: 2\r\n\r\nno")
    (first, body1), (second, body2) = _exchange(peer, count=2)
    assert (first.status, body1, first.will_close, first.isclosed()) == (200, b"hello", False, True)
    assert first.headers["x-a"] == "1" and "X-A" in first.headers and first.headers.get("missing") is None
    assert (second.status, second.reason, body2) == (404, "Not Found", b"no")
    assert peer.requests[0].startswith(b"GET /v2/ HTTP/1.1\r\n") and b"\r\nHost: 127.0.0.1" in peer.requests[0]


def test_chunked_body_with_extensions_and_trailers_keeps_the_connection() -> None:
    body = b"4;name=x\r\nwiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nTrailer: yes\r\n\r\n"
    peer = _Peer(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + body,
                 b"HTTP/1.1 204 No Content\r\n\r\n")
    (first, body1), (second, body2) = _exchange(peer, count=2)
    assert body1 == b"wikipedia in\r\n\r\nchunks." and first.length is None and not first.will_close
    assert (second.status, body2, second.isclosed()) == (204, b"", True)


def test_both_framings_read_as_chunked_and_the_connection_is_not_reused() -> None:
    peer = _Peer(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
    ((response, body),) = _exchange(peer)
    assert body == b"abc" and response.will_close


def test_interim_answers_are_skipped_and_head_has_no_body() -> None:
    peer = _Peer(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
                 b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
    ((response, body),) = _exchange(peer, method="HEAD")
    assert (response.status, body, response.headers["Link"]) == (200, b"", None)


def test_http_1_0_and_a_body_to_the_close() -> None:
    peer = _Peer(b"HTTP/1.0 200 OK\r\n\r\nuntil the end")
    ((response, body),) = _exchange(peer)
    assert body == b"until the end" and response.will_close and response.length is None


def test_connection_close_and_folded_header() -> None:
    peer = _Peer(b"HTTP/1.1 401 Unauthorized\r\nConnection: Keep-Alive, close\r\nWWW-Authenticate: Bearer\r\n"
                 b" realm=\"x\"\r\nWWW-Authenticate: Basic\r\nContent-Length: 0\r\n\r\n")
    ((response, _),) = _exchange(peer)
    assert response.will_close
    assert response.headers["www-authenticate"] == 'Bearer realm="x"'
    assert response.headers.get_all("WWW-Authenticate") == ['Bearer realm="x"', "Basic"]


@pytest.mark.parametrize("answer, message", [
    (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", "5 bytes short"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nshort", "bytes short"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n", "ended early"),
])
def test_a_body_cut_short_is_an_incomplete_read(answer: bytes, message: str) -> None:
    with pytest.raises(IncompleteRead, match=message):
        _exchange(_Peer(answer))


@pytest.mark.parametrize("answer, message", [
    (b"SSH-2.0-OpenSSH\r\n\r\n", "not an HTTP/1.x status line"),
    (b"HTTP/2 200\r\n\r\n", "not an HTTP/1.x status line"),
    (b"HTTP/1.1 20 OK\r\n\r\n", "not an HTTP/1.x status line"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello", "conflicting Content-Length"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\n", "no number"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 0x10\r\n\r\n", "no number"),
    (b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "malformed header line"),
    (b"HTTP/1.1 200 OK\r\n\tfolded first\r\n\r\n", "continuation"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "malformed chunk size"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcXY0\r\n\r\n", "not followed by CRLF"),
    (b"HTTP/1.1 200 OK\r\nX: " + b"a" * (MAX_LINE + 10) + b"\r\n\r\n", "longer than"),
    (b"HTTP/1.1 200 OK\r\n" + b"X: 1\r\n" * (MAX_HEADERS + 1) + b"\r\n", f"more than {MAX_HEADERS}"),
    (b"HTTP/1.1 200 OK\r\nX: 1\r\n", "closed inside the response head"),
    (b"HTTP/1.1 100 Continue\r\n\r\n" * (MAX_INTERIM + 1) + b"HTTP/1.1 200 OK\r\n\r\n", "interim"),
])
def test_a_broken_response_is_a_protocol_error(answer: bytes, message: str) -> None:
    with pytest.raises(HttpProtocolError, match=message):
        _exchange(_Peer(answer))


def test_no_status_line_at_all_is_a_remote_disconnect() -> None:
    with pytest.raises(RemoteDisconnected):
        _exchange(_Peer(b""))


def test_protocol_errors_are_os_errors() -> None:
    assert issubclass(HttpProtocolError, OSError) and issubclass(RemoteDisconnected, ConnectionResetError)


@pytest.mark.parametrize("method, target, headers", [
    ("GET", "/a b", {}),
    ("GET", "/a\r\nX: y", {}),
    ("GET", "/é", {}),
    ("G T", "/", {}),
    ("GET", "/", {"X-Injected": "a\r\nEvil: 1"}),
    ("GET", "/", {"Bad Name": "1"}),
    ("GET", "/", {"X": "nul\x00"}),
    ("GET", "/", {"X": "snow ☃"}),
])
def test_a_request_that_would_split_the_message_is_refused(method: str, target: str, headers: dict[str, str]) -> None:
    with pytest.raises(ValueError):
        encode_request(method, target, headers, None)


def test_request_bytes_and_host_values() -> None:
    assert encode_request("POST", "/token", {"Host": "r"}, b"a=1") == b"POST /token HTTP/1.1\r\nHost: r\r\nContent-Length: 3\r\n\r\na=1"
    assert b"Content-Length: 0" in encode_request("POST", "/token", {}, None)
    assert b"Content-Length" not in encode_request("GET", "/", {}, None)
    assert host_header("::1", 5000, 443) == "[::1]:5000" and host_header("r.io", 443, 443) == "r.io"
    assert host_header("r.io", 80, 443) == "r.io:80"


@pytest.mark.parametrize("host, name, ok", [("127.0.0.1", "127.0.0.1", True), ("127.0.0.1", "localhost", True),
                                            ("127.0.0.2", "127.0.0.2", False)])
def test_tls_checks_the_certificate_against_the_name_connected_to(tmp_path, host: str, name: str, ok: bool) -> None:
    """The certificate names localhost and 127.0.0.1: another loopback address must not pass."""
    ca = make_ca(tmp_path)
    peer = _Peer(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", host=host, tls=server_ssl_context(ca))
    conn = WireConnection(name, peer.port, 5.0, ssl.create_default_context(cafile=ca.cert))
    try:
        if not ok:
            with pytest.raises(ssl.SSLCertVerificationError, match="mismatch"):
                conn.connect()
            return
        conn.connect()
        conn.request("GET", "/", None, {"Host": name})
        assert conn.getresponse().read() == b"ok"
    finally:
        conn.close()
        peer.close()
