"""A loopback HTTPS server that answers like a Kubernetes API server, for the tests.

No API server can be installed here, so this serves API-shaped JSON from
in-memory objects: ``/version``, ``/api/v1/nodes``, ``/apis/apps/v1/daemonsets``
(and per namespace), ``/apis/node.k8s.io/v1/runtimeclasses``,
``/apis/nvidia.com/v1/clusterpolicies``, ``/api/v1/namespaces/NS/configmaps/NAME``.
The REAL ``kubernetes`` client reaches it through a kubeconfig the test writes
(server URL, certificate-authority-data of a CA made here, bearer token).

Switches (set on the running server, read per request):
  ``forbidden``   paths (prefixes) answered 403
  ``missing``     paths (prefixes) answered 404
  ``stall``       accept the request, never answer (until ``stop()``); ``stall_logs``: only pods/log
  ``broken_continue``  answer every list page with the same ``continue`` token (a buggy server)
  ``endless_continue`` answer every list page with a new ``continue`` token (a server that never ends)
  ``huge_nodes_bytes`` answer ``/api/v1/nodes`` with a NodeList of about this many bytes, generated
                       as it is sent (a gigabyte costs the server nothing)
  ``raw``         path -> bytes answered as they are (200, JSON content type): malformed answers
Lists honour ``limit`` and ``continue`` as the API server does (the token is an offset here),
and simple ``fieldSelector`` terms (``type=Warning``, ``spec.nodeName!=x``, comma = AND).

Also served, for ``imagelint doctor``: pods (``/api/v1/pods``, per namespace, one by name),
``pods/log`` (plain text from ``ClusterState.pod_logs``, honouring ``tailLines``,
``limitBytes`` and ``previous``), events, ConfigMap lists, DaemonSet status (part of each
DaemonSet object), and DRA's ``resource.k8s.io/v1`` DeviceClasses, ResourceSlices,
ResourceClaims and ResourceClaimTemplates (``deviceclasses=None`` = the API is not served: 404)
as a v1.34+ API server serves them: group and version discovery (``APIGroup``,
``APIResourceList`` with each kind's ``namespaced`` and ``resourceclaims/status``), typed lists
(``DeviceClassList``... whose items carry ``apiVersion``/``kind``), cluster-wide and per-namespace
lists and one object by name; ``device_class``, ``resource_slice``/``gpu_device`` (the NVIDIA DRA
kubelet plugin's attributes), ``resource_claim`` (``status.allocation`` with device results and a
``metadata.name`` node selector, ``status.reservedFor``) and ``resource_claim_template`` build them. ``methods`` records each request's
(method, path), so a test can compare what was called with what a ClusterRole grants.

Any kind not served above is served generically from ``ClusterState.objects``
(``"apis/apps/v1/deployments"`` → items; for ``imagelint audit``): lists cluster-wide and per
namespace, and one object by name. These lists and pods honour a ``labelSelector`` of ``key=value`` terms.
Collections named in ``ClusterState.writable`` also accept POST (create: 409 if the name exists)
and PUT (replace: 404 if missing, 409 on a stale ``resourceVersion``), as the API server does;
``writes`` records them (method, path).
Every request needs ``Authorization: Bearer <token>``, else 401.

Where the real API server (``tests/../shared/reference/k8s-real-api.md``, v1.36) answers in a
shape a hand-written fake tends to miss, this one answers the same way:
  * ``pods/log`` is proxied to the node's kubelet: a pod on a node whose Ready condition is not
    ``True`` (kubelet gone) is a 500 ``Get "https://NODE:10250/containerLogs/...": dial tcp ...:
    connect: connection refused``; ``previous=true`` with no earlier instance is a 400 ``previous
    terminated container "C" in pod "P" not found``; a container still waiting to start is a 400
    ``container "C" in pod "P" is waiting to start: ContainerCreating``; a running container with
    no log yet is an empty 200. ``oversize_logs`` ignores ``limitBytes``/``tailLines`` (a server
    may still send more than asked for) and sends that many bytes of log lines after the log.
  * a 403 names the user, verb, resource and namespace (``pods is forbidden: User "alice" cannot
    list resource "pods" in API group "" in the namespace "default"``, ``details.kind``);
    ``role_namespace`` = a namespace-scoped Role: only that namespace's objects are readable.
  * ``metadata.remainingItemCount`` on a page only when the list has no label or field selector;
    a ``continue`` token that is not one of ours is a 400 ``invalid continue token``; an unknown
    field selector is a 400 ``field label not supported``.
  * PUT without ``metadata.resourceVersion`` is a 422; with a stale one a 409 Conflict. A pod
    or workload whose (template's) nvidia.com/* requests differ from its limits is a 422 with
    the validation's words (``must be equal to nvidia.com/gpu limit of 2``): no FailedCreate.
  * ``conflicts_left``: the next N PUTs find someone else's newer write first (409, the stored
    object's ``resourceVersion`` moves on), as when two writers race.
Events are served as stored: ``scheduler_event`` builds one the way the scheduler writes it
(events.k8s.io/v1, read through core/v1: null ``count``/timestamps/``source.component``).
"""

from __future__ import annotations

import base64
import copy
import datetime
import json
import socket
import ssl
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


@dataclass
class CertificateAuthority:
    cert_pem: bytes
    server_cert_pem: bytes
    server_key_pem: bytes


def make_ca(hostname: str = "127.0.0.1") -> CertificateAuthority:
    """A throwaway CA and a server certificate for ``hostname`` (IP SAN) signed by it."""
    import ipaddress

    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "fakekube test CA")])
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(hostname))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    return CertificateAuthority(
        cert_pem=ca_cert.public_bytes(serialization.Encoding.PEM),
        server_cert_pem=cert.public_bytes(serialization.Encoding.PEM),
        server_key_pem=key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ),
    )


# GET /apis/resource.k8s.io/v1 on a v1.34+ API server (kube-apiserver's resource.k8s.io/v1 storage):
# the four kinds and their status subresource, with the verbs RBAC and kubectl see.
_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
DRA_RESOURCES: list[dict[str, Any]] = [
    {"name": "deviceclasses", "singularName": "deviceclass", "namespaced": False, "kind": "DeviceClass", "verbs": _VERBS},
    {"name": "resourceclaims", "singularName": "resourceclaim", "namespaced": True, "kind": "ResourceClaim", "verbs": _VERBS},
    {"name": "resourceclaims/status", "singularName": "", "namespaced": True, "kind": "ResourceClaim", "verbs": ["get", "patch", "update"]},
    {"name": "resourceclaimtemplates", "singularName": "resourceclaimtemplate", "namespaced": True, "kind": "ResourceClaimTemplate",
     "verbs": _VERBS},
    {"name": "resourceslices", "singularName": "resourceslice", "namespaced": False, "kind": "ResourceSlice", "verbs": _VERBS},
]


def _list(kind: str, api_version: str, items: list[dict[str, Any]]) -> dict[str, Any]:
    return {"kind": kind, "apiVersion": api_version, "metadata": {"resourceVersion": "1"}, "items": items}


@dataclass
class ClusterState:
    """The objects the fake API server serves."""

    nodes: list[dict[str, Any]] = field(default_factory=list)
    daemonsets: list[dict[str, Any]] = field(default_factory=list)
    runtimeclasses: list[dict[str, Any]] = field(default_factory=list)
    clusterpolicies: list[dict[str, Any]] | None = None  # None = CRD not installed (404)
    configmaps: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    objects: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # "apis/apps/v1/deployments" → items
    writable: set[str] = field(default_factory=set)  # collections accepting POST/PUT
    pods: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    # (namespace, pod, container, previous) -> the container's log text
    pod_logs: dict[tuple[str, str, str, bool], str] = field(default_factory=dict)
    deviceclasses: list[dict[str, Any]] | None = None  # None = resource.k8s.io/v1 not served (404)
    resourceslices: list[dict[str, Any]] | None = None
    resourceclaims: list[dict[str, Any]] | None = None
    resourceclaimtemplates: list[dict[str, Any]] | None = None  # None with deviceclasses set: served, none


class FakeKube:
    def __init__(self, state: ClusterState, workdir: Path, token: str) -> None:
        self.state = state
        self.workdir = Path(workdir)
        self.token = token
        self.forbidden: set[str] = set()
        self.missing: set[str] = set()
        self.stall = False
        self.broken_continue = False
        self.endless_continue = False
        self.huge_nodes_bytes = 0
        self.raw: dict[str, bytes] = {}
        self.oversize_logs = 0  # > 0: logs ignore limitBytes/tailLines and run on this many bytes more
        self.role_namespace: str | None = None
        self.stall_logs = False
        self.user = "alice"
        self.conflicts_left = 0
        self.requests: list[str] = []
        self.methods: list[tuple[str, str]] = []  # (HTTP method, path) of each request
        self.queries: list[str] = []  # the query string of each request, in order
        self.writes: list[tuple[str, str]] = []  # (method, path) of each accepted POST/PUT
        self._lock = threading.Lock()
        self._release = threading.Event()
        self.ca = make_ca()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle ---
    def start(self) -> "FakeKube":
        cert = self.workdir / "server.crt"
        key = self.workdir / "server.key"
        cert.write_bytes(self.ca.server_cert_pem)
        key.write_bytes(self.ca.server_key_pem)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        fake = self

        class Handler(BaseHTTPRequestHandler):
            # Keep-alive, as a real API server: with HTTP/1.0's close after each answer, a client
            # that reuses its pooled connection for the next page can race the close.
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:  # noqa: N802 (http.server API)
                fake._handle(self)

            def do_POST(self) -> None:  # noqa: N802
                fake._write(self, "POST")

            def do_PUT(self) -> None:  # noqa: N802
                fake._write(self, "PUT")

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        server.socket = context.wrap_socket(server.socket, server_side=True)
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="fakekube", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._release.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"https://127.0.0.1:{self._server.server_address[1]}"

    # --- kubeconfig ---
    def write_kubeconfig(
        self,
        path: Path,
        token: str | None = None,
        server: str | None = None,
        context: str = "fake",
        namespace: str | None = None,
        ca_pem: bytes | None = None,
    ) -> Path:
        ctx: dict[str, Any] = {"cluster": "fake-cluster", "user": "fake-user"}
        if namespace:
            ctx["namespace"] = namespace
        document = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "fake-cluster",
                    "cluster": {
                        "server": server or self.url,
                        "certificate-authority-data": base64.b64encode(ca_pem or self.ca.cert_pem).decode(),
                    },
                }
            ],
            "users": [{"name": "fake-user", "user": {"token": token if token is not None else self.token}}],
            "contexts": [{"name": context, "context": ctx}],
            "current-context": context,
        }
        path.write_text(json.dumps(document))  # JSON is YAML
        return path

    # --- serving ---
    def _handle(self, request: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(request.path)
        path = parts.path
        self.requests.append(path)
        self.queries.append(parts.query)
        self.methods.append((request.command, path))
        if self.stall:
            self._release.wait(timeout=60)
            return
        if request.headers.get("Authorization") != f"Bearer {self.token}":
            return self._send(request, 401, _status(401, "Unauthorized"))
        if any(path.startswith(p) for p in self.forbidden) or not self._role_allows(path):
            return self._send(request, 403, self._forbidden(path, parse_qs(parts.query)))
        if any(path.startswith(p) for p in self.missing):
            return self._send(request, 404, _status(404, "NotFound"))
        if path == "/api/v1/nodes" and self.huge_nodes_bytes:
            return self._send_huge_nodes(request, self.huge_nodes_bytes)
        if path in self.raw:
            return self._send_bytes(request, 200, self.raw[path])
        query = parse_qs(parts.query)
        if path.endswith("/log") and self.stall_logs:
            self._release.wait(timeout=60)  # a kubelet proxy that never answers
            return
        if path.endswith("/log"):
            answer = self._log(path, query)
            if isinstance(answer, tuple):
                return self._send(request, answer[0], answer[1])
            return self._send_text(request, answer, self.oversize_logs)
        if "continue" in query and not query["continue"][0].isdigit() and not query["continue"][0].startswith("endless-"):
            return self._send(request, 400, _status(400, "BadRequest", f"invalid continue token: {query['continue'][0]}"))
        bad_field = _unsupported_field(path, query.get("fieldSelector", [""])[0])
        if bad_field:
            return self._send(request, 400, _status(400, "BadRequest", f"field label not supported: {bad_field}"))
        body = self._route(path)
        if body is None:
            body = self._generic(path, query)
        if body is None:
            return self._send(request, 404, _status(404, "NotFound", f"the server could not find {path}"))
        if "items" in body and "fieldSelector" in query:
            body = {**body, "items": [i for i in body["items"] if _field_selected(i, query["fieldSelector"][0])]}
        # Pods and the generic kinds honour a labelSelector (the other lists keep answering everything:
        # tests/deploytarget check that the client passes it, not that this server filters).
        if body.get("kind") in ("PodList", "List") and query.get("labelSelector", [""])[0]:
            body = {**body, "items": [i for i in body["items"] if _label_selected(i, query["labelSelector"][0])]}
        self._send(request, 200, self._page(body, query))

    # --- RBAC ---
    def _role_allows(self, path: str) -> bool:
        """A namespace-scoped Role (``role_namespace``) reads only that namespace's objects."""
        if self.role_namespace is None or path == "/version":
            return True
        split = self._split(path)
        rest = split[1] if split else []
        return rest[:2] == ["namespaces", self.role_namespace] and len(rest) >= 3

    def _forbidden(self, path: str, query: dict[str, list[str]], verb: str | None = None) -> dict[str, Any]:
        """The API server's 403 body: who cannot do what to which resource, where."""
        split = self._split(path)
        prefix, rest = split if split else ("api/v1", [path.strip("/")])
        group = "" if prefix == "api/v1" else prefix.split("/")[1]
        namespace = rest[1] if rest[:1] == ["namespaces"] and len(rest) >= 3 else None
        rest = rest[2:] if namespace else rest
        resource = rest[0] if rest else ""
        if verb is None:
            verb = "list" if len(rest) == 1 else "get"
        if len(rest) == 3:
            resource = f"{rest[0]}/{rest[2]}"
        name = rest[1] if len(rest) >= 2 else ""
        head = f'{rest[0] if rest else resource} "{name}" is forbidden' if name else f"{resource} is forbidden"
        where = f' in the namespace "{namespace}"' if namespace else " at the cluster scope"
        message = f'{head}: User "{self.user}" cannot {verb} resource "{resource}" in API group "{group}"{where}'
        body = _status(403, "Forbidden", message)
        body["details"] = {"kind": resource.split("/")[0], **({"name": name} if name else {})}
        return body


    # --- generic kinds (ClusterState.objects) ---
    @staticmethod
    def _split(path: str) -> tuple[str, list[str]] | None:
        """``/apis/G/V/namespaces/NS/PLURAL/NAME`` → ("apis/G/V", [namespaces, NS, PLURAL, NAME])."""
        parts = path.strip("/").split("/")
        if parts[:2] == ["api", "v1"]:
            return "api/v1", parts[2:]
        if parts[0] == "apis" and len(parts) >= 3:
            return "/".join(parts[:3]), parts[3:]
        return None

    def _locate(self, path: str) -> tuple[str, str | None, str | None] | None:
        """(collection key, namespace, name) for a generic path, or None."""
        split = self._split(path)
        if split is None:
            return None
        prefix, rest = split
        if len(rest) in (3, 4) and rest[0] == "namespaces":
            return f"{prefix}/{rest[2]}", rest[1], rest[3] if len(rest) == 4 else None
        if len(rest) in (1, 2):
            return f"{prefix}/{rest[0]}", None, rest[1] if len(rest) == 2 else None
        return None

    def _generic(self, path: str, query: dict[str, list[str]]) -> dict[str, Any] | None:
        where = self._locate(path)
        if where is None or where[0] not in self.state.objects:
            return None
        key, namespace, name = where
        with self._lock:
            items = [o for o in self.state.objects[key] if namespace is None or o["metadata"].get("namespace") == namespace]
            if name is not None:
                found = next((o for o in items if o["metadata"].get("name") == name), None)
                return copy.deepcopy(found) if found is not None else None
            return _list("List", "v1", copy.deepcopy(items))

    def _write(self, request: BaseHTTPRequestHandler, method: str) -> None:
        path = urlsplit(request.path).path
        self.requests.append(f"{method} {path}")
        length = int(request.headers.get("Content-Length") or 0)
        data = request.rfile.read(min(length, 8 * 2**20))
        if request.headers.get("Authorization") != f"Bearer {self.token}":
            return self._send(request, 401, _status(401, "Unauthorized"))
        if any(path.startswith(p) for p in self.forbidden) or not self._role_allows(path):
            return self._send(request, 403, self._forbidden(path, {}, "create" if method == "POST" else "update"))
        where = self._locate(path)
        if where is None or where[0] not in self.state.writable:
            return self._send(request, 404, _status(404, "NotFound", f"the server could not find {path}"))
        key, namespace, name = where
        try:
            body = json.loads(data)
        except ValueError:
            return self._send(request, 400, _status(400, "BadRequest", "not JSON"))
        meta = body.setdefault("metadata", {})
        if namespace:
            meta["namespace"] = namespace
        invalid = _invalid_gpu_resources(body)
        if invalid:  # validation of the pod (or of a workload's pod template), before anything is stored
            kind = str(body.get("kind") or "Pod")
            message = f'{kind} "{meta.get("name", "")}" is invalid: ' + "; ".join(invalid)
            return self._send(request, 422, _status(422, "Invalid", message))
        with self._lock:
            items = self.state.objects.setdefault(key, [])
            same = [i for i, o in enumerate(items) if o["metadata"].get("name") == (name or meta.get("name"))
                    and o["metadata"].get("namespace") == namespace]
            if method == "POST":
                if name is not None:
                    return self._send(request, 405, _status(405, "MethodNotAllowed"))
                if same:
                    return self._send(request, 409, _status(409, "AlreadyExists", f"{meta.get('name')} already exists"))
                meta.update(resourceVersion="1", uid=f"uid-{len(self.writes)}")
                items.append(body)
            else:
                if name is None or meta.get("name") != name:
                    return self._send(request, 400, _status(400, "BadRequest", "name mismatch"))
                if not same:
                    return self._send(request, 404, _status(404, "NotFound", f"{name} not found"))
                current = items[same[0]]
                if not meta.get("resourceVersion"):
                    return self._send(request, 422, _status(
                        422, "Invalid", f'{body.get("kind", "object")} "{name}" is invalid: metadata.resourceVersion: '
                        "Invalid value: 0x0: must be specified for an update"))
                if self.conflicts_left > 0:  # another writer got there first
                    self.conflicts_left -= 1
                    current["metadata"]["resourceVersion"] = str(int(current["metadata"]["resourceVersion"]) + 1)
                if meta.get("resourceVersion") != current["metadata"].get("resourceVersion"):
                    return self._send(request, 409, _status(
                        409, "Conflict", f'Operation cannot be fulfilled on {key.rsplit("/", 1)[-1]} "{name}": the object has been '
                        "modified; please apply your changes to the latest version and try again"))
                meta.update(resourceVersion=str(int(current["metadata"]["resourceVersion"]) + 1),
                            uid=current["metadata"].get("uid"))
                items[same[0]] = body
            self.writes.append((method, path))
        self._send(request, 201 if method == "POST" else 200, body)

    def _log(self, path: str, query: dict[str, list[str]]) -> bytes | tuple[int, dict[str, Any]]:
        """The log as the kubelet serves it through the API server's proxy, or (status, Status body)."""
        parts = path.strip("/").split("/")
        if len(parts) != 7 or parts[:3] != ["api", "v1", "namespaces"] or parts[4] != "pods":
            return 404, _status(404, "NotFound", f"the server could not find {path}")
        namespace, pod = parts[3], parts[5]
        found = next((p for p in self.state.pods if _meta(p) == (namespace, pod)), None)
        if found is None:
            return 404, _status(404, "NotFound", f'pods "{pod}" not found')
        previous = query.get("previous", ["false"])[0] == "true"
        spec = found.get("spec") or {}
        names = [str(c.get("name", "")) for c in (spec.get("initContainers") or []) + (spec.get("containers") or [])]
        main = [str(c.get("name", "")) for c in spec.get("containers") or []]
        container = query.get("container", [""])[0] or (main[0] if len(main) == 1 else "")
        if container not in names:
            return 400, _status(400, "BadRequest", f"container {container} is not valid for pod {pod}")
        node = str(spec.get("nodeName") or "")
        if not node:
            return 400, _status(400, "BadRequest", f'container "{container}" in pod "{pod}" is waiting to start: ContainerCreating')
        node_obj = next((n for n in self.state.nodes if n["metadata"]["name"] == node), None)
        ready = next((c.get("status") for c in ((node_obj or {}).get("status") or {}).get("conditions") or [] if c.get("type") == "Ready"), "True")
        if ready != "True":
            # the API server cannot reach the kubelet of a node that stopped reporting
            url = f"https://{node}:10250/containerLogs/{namespace}/{pod}/{container}"
            return 500, _status(500, "InternalError", f'Get "{url}": dial tcp 10.0.0.{len(node) % 250}:10250: connect: connection refused')
        status = found.get("status") or {}
        statuses = {str(c.get("name")): c for c in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or [])}
        current = statuses.get(container) or {}
        text = self.state.pod_logs.get((namespace, pod, container, previous))
        if previous and text is None and not (current.get("lastState") or {}).get("terminated"):
            return 400, _status(400, "BadRequest", f'previous terminated container "{container}" in pod "{pod}" not found')
        waiting = (current.get("state") or {}).get("waiting") or {}
        if not previous and text is None and waiting and not current.get("restartCount"):
            reason = waiting.get("reason") or "ContainerCreating"
            return 400, _status(400, "BadRequest", f'container "{container}" in pod "{pod}" is waiting to start: {reason}')
        lines = (text or "").splitlines(keepends=True)
        if "tailLines" in query and not self.oversize_logs:
            lines = lines[-int(query["tailLines"][0]):]
        data = "".join(lines).encode()
        if "limitBytes" in query and not self.oversize_logs:
            data = data[: int(query["limitBytes"][0])]
        return data

    def _page(self, body: dict[str, Any], query: dict[str, list[str]]) -> dict[str, Any]:
        if "items" not in body or "limit" not in query:
            return body
        limit = int(query["limit"][0])
        items = body["items"]
        if self.endless_continue:
            body = {**body, "items": items[:limit]}
            body["metadata"] = {**body.get("metadata", {}), "continue": f"endless-{len(self.requests)}"}
            return body
        offset = int(query.get("continue", ["0"])[0])
        body = {**body, "items": items[offset : offset + limit]}
        if offset + limit < len(items) or self.broken_continue:
            body["metadata"] = {**body.get("metadata", {}), "continue": "1" if self.broken_continue else str(offset + limit)}
            if not query.get("labelSelector", [""])[0] and not query.get("fieldSelector", [""])[0]:
                # the server counts what is left only when it need not filter
                body["metadata"]["remainingItemCount"] = max(0, len(items) - offset - limit)
        return body

    def _send_huge_nodes(self, request: BaseHTTPRequestHandler, size: int) -> None:
        node = json.dumps(cpu_node("n" * 40)).encode()
        count = max(1, size // (len(node) + 1))
        head, tail = b'{"kind":"NodeList","apiVersion":"v1","metadata":{},"items":[', b"]}"
        request.send_response(200)
        request.send_header("Content-Type", "application/json")
        request.send_header("Content-Length", str(len(head) + count * (len(node) + 1) - 1 + len(tail)))
        request.end_headers()
        try:
            request.wfile.write(head)
            batch = b",".join([node] * 256)
            sent = 0
            while sent < count:
                n = min(256, count - sent)
                chunk = batch if n == 256 else b",".join([node] * n)
                request.wfile.write((b"," if sent else b"") + chunk)
                sent += n
            request.wfile.write(tail)
        except OSError:
            pass  # the client stopped reading: the point of the test

    def _route(self, path: str) -> dict[str, Any] | None:
        state = self.state
        parts = path.strip("/").split("/")
        if path == "/version":
            return {"major": "1", "minor": "30", "gitVersion": "v1.30.2"}
        if path == "/api/v1/nodes":
            return _list("NodeList", "v1", copy.deepcopy(state.nodes))
        if path == "/apis/apps/v1/daemonsets":
            return _list("DaemonSetList", "apps/v1", copy.deepcopy(state.daemonsets))
        if len(parts) == 6 and parts[:4] == ["apis", "apps", "v1", "namespaces"] and parts[5] == "daemonsets":
            items = [d for d in state.daemonsets if d["metadata"].get("namespace") == parts[4]]
            return _list("DaemonSetList", "apps/v1", copy.deepcopy(items))
        if path == "/apis/node.k8s.io/v1/runtimeclasses":
            return _list("RuntimeClassList", "node.k8s.io/v1", copy.deepcopy(state.runtimeclasses))
        if path == "/apis/nvidia.com/v1/clusterpolicies":
            if state.clusterpolicies is None:
                return None
            return _list("ClusterPolicyList", "nvidia.com/v1", copy.deepcopy(state.clusterpolicies))
        if path == "/api/v1/pods":
            return _list("PodList", "v1", copy.deepcopy(state.pods))
        if path == "/api/v1/events":
            return _list("EventList", "v1", copy.deepcopy(state.events))
        if path == "/api/v1/configmaps":
            return _list("ConfigMapList", "v1", [_configmap(ns, n, d) for (ns, n), d in state.configmaps.items()])
        if len(parts) == 5 and parts[:3] == ["api", "v1", "namespaces"]:
            namespace, plural = parts[3], parts[4]
            if plural == "pods":
                return _list("PodList", "v1", [copy.deepcopy(p) for p in state.pods if _meta(p)[0] == namespace])
            if plural == "events":
                return _list("EventList", "v1", [copy.deepcopy(e) for e in state.events if _meta(e)[0] == namespace])
            if plural == "configmaps":
                return _list("ConfigMapList", "v1", [_configmap(ns, n, d) for (ns, n), d in state.configmaps.items() if ns == namespace])
        if len(parts) == 6 and parts[:3] == ["api", "v1", "namespaces"] and parts[4] == "pods":
            found = next((p for p in state.pods if _meta(p) == (parts[3], parts[5])), None)
            return copy.deepcopy(found) if found is not None else None
        if parts[:2] == ["apis", "resource.k8s.io"] and state.deviceclasses is not None:
            return self._dra(parts)
        if len(parts) == 6 and parts[:3] == ["api", "v1", "namespaces"] and parts[4] == "configmaps":
            data = state.configmaps.get((parts[3], parts[5]))
            if data is None:
                return None
            return {
                "kind": "ConfigMap",
                "apiVersion": "v1",
                "metadata": {"name": parts[5], "namespace": parts[3]},
                "data": dict(data),
            }
        return None

    def _dra(self, parts: list[str]) -> dict[str, Any] | None:
        """``resource.k8s.io``: group and version discovery, lists (typed ``DeviceClassList``...), one object."""
        state = self.state
        if len(parts) == 2:
            version = {"groupVersion": "resource.k8s.io/v1", "version": "v1"}
            return {"kind": "APIGroup", "apiVersion": "v1", "name": "resource.k8s.io", "versions": [version], "preferredVersion": version}
        if parts[2] != "v1":
            return None
        if len(parts) == 3:
            return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "resource.k8s.io/v1", "resources": copy.deepcopy(DRA_RESOURCES)}
        stored = {"deviceclasses": state.deviceclasses, "resourceslices": state.resourceslices, "resourceclaims": state.resourceclaims,
                  "resourceclaimtemplates": state.resourceclaimtemplates if state.resourceclaimtemplates is not None else []}
        rest = parts[3:]
        namespace = None
        if rest[:1] == ["namespaces"] and len(rest) >= 3:
            namespace, rest = rest[1], rest[2:]
        plural, name = rest[0], (rest[1] if len(rest) > 1 else None)
        kind = next((r["kind"] for r in DRA_RESOURCES if r["name"] == plural), None)
        namespaced = next((r["namespaced"] for r in DRA_RESOURCES if r["name"] == plural), False)
        objects = stored.get(plural)
        if kind is None or objects is None or (namespace is not None and not namespaced) or len(rest) > 2:
            return None
        chosen = [o for o in objects if namespace is None or _meta(o)[0] == namespace]
        if name is not None:
            found = next((o for o in chosen if _meta(o)[1] == name), None)
            return copy.deepcopy(found) if found is not None else None
        return _list(f"{kind}List", "resource.k8s.io/v1", [{"apiVersion": "resource.k8s.io/v1", "kind": kind, **copy.deepcopy(o)} for o in chosen])

    @staticmethod
    def _send_text(request: BaseHTTPRequestHandler, data: bytes, filler: int = 0) -> None:
        """``data``, then ``filler`` more bytes of log lines generated as they are sent."""
        line = b"I1202 06:00:00.000000 1 main.go:1] still here\n"
        count = filler // len(line)
        request.send_response(200)
        request.send_header("Content-Type", "text/plain")
        request.send_header("Content-Length", str(len(data) + count * len(line)))
        request.end_headers()
        try:
            request.wfile.write(data)
            batch = line * 4096
            for _ in range(count // 4096):
                request.wfile.write(batch)
            request.wfile.write(line * (count % 4096))
        except OSError:
            pass  # the client stopped reading: the point of the test

    @staticmethod
    def _send(request: BaseHTTPRequestHandler, status: int, body: dict[str, Any]) -> None:
        FakeKube._send_bytes(request, status, json.dumps(body).encode())

    @staticmethod
    def _send_bytes(request: BaseHTTPRequestHandler, status: int, data: bytes) -> None:
        request.send_response(status)
        request.send_header("Content-Type", "application/json")
        request.send_header("Content-Length", str(len(data)))
        request.end_headers()
        request.wfile.write(data)


def _meta(obj: dict[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace", "")), str(meta.get("name", ""))


def _configmap(namespace: str, name: str, data: dict[str, str]) -> dict[str, Any]:
    return {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": name, "namespace": namespace}, "data": dict(data)}


def _field_selected(obj: dict[str, Any], selector: str) -> bool:
    """``a.b=v,c!=w``: every term holds (the API server's simple field selectors)."""
    for term in filter(None, selector.split(",")):
        negate = "!=" in term
        key, value = term.split("!=" if negate else "=", 1)
        current: Any = obj
        for part in key.lstrip("=").split("."):
            current = current.get(part) if isinstance(current, dict) else None
        if (str(current if current is not None else "") == value.lstrip("=")) == negate:
            return False
    return True


def _label_selected(obj: Any, selector: str) -> bool:
    """``key=value`` terms, comma = AND (the subset of label selectors the tests use)."""
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    labels = meta.get("labels") if isinstance(meta, dict) else None
    labels = labels if isinstance(labels, dict) else {}
    terms = [t.partition("=") for t in selector.split(",") if t]
    return all(labels.get(k) == v for k, _, v in terms)


# Fields the API server accepts in a field selector, per list (anything else: 400).
_FIELDS = {
    "pods": ("spec.nodeName", "status.phase", "metadata.name", "metadata.namespace", "spec.restartPolicy",
             "spec.schedulerName", "spec.serviceAccountName", "status.podIP", "status.nominatedNodeName"),
    "events": ("involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
               "involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath",
               "reason", "reportingComponent", "source", "type", "metadata.name", "metadata.namespace"),
}


def _invalid_gpu_resources(body: dict[str, Any]) -> list[str]:
    """The API server's validation of extended resources (nvidia.com/*) in a pod or pod template:
    requests must equal limits, a request needs a limit, quantities are integers."""
    spec = body.get("spec") or {}
    prefix = "spec"
    for step in ("template", "spec"):  # Deployment/Job/DaemonSet: spec.template.spec
        if step == "template" and isinstance(spec.get("template"), dict):
            spec, prefix = spec["template"].get("spec") or {}, "spec.template.spec"
    errors = []
    for i, c in enumerate(spec.get("containers") or []):
        resources = c.get("resources") or {}
        requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
        for name in sorted(set(requests) | set(limits)):
            if not name.startswith("nvidia.com/"):
                continue
            where = f"{prefix}.containers[{i}].resources"
            for part, values in (("requests", requests), ("limits", limits)):
                if name in values and not str(values[name]).isdigit():
                    errors.append(f'{where}.{part}[{name}]: Invalid value: "{values[name]}": must be an integer')
            if name in requests and name not in limits:
                errors.append(f"{where}.limits: Required value: Limit must be set for non overcommitable resources")
            elif name in requests and str(requests[name]) != str(limits[name]):
                errors.append(f'{where}.requests[{name}]: Invalid value: "{requests[name]}": must be equal to {name} limit of {limits[name]}')
    return errors


def _unsupported_field(path: str, selector: str) -> str | None:
    plural = path.rstrip("/").rsplit("/", 1)[-1]
    allowed = _FIELDS.get(plural)
    if not selector or allowed is None:
        return None
    for term in filter(None, selector.split(",")):
        key = term.split("!=" if "!=" in term else "=", 1)[0].lstrip("=")
        if key not in allowed:
            return key
    return None


def _status(code: int, reason: str, message: str = "") -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message or reason, "reason": reason, "code": code}


def dead_url() -> str:
    """An https URL on 127.0.0.1 where nothing listens (connection refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"https://127.0.0.1:{port}"


# --- realistic objects ---------------------------------------------------------------


def gfd_node(
    name: str,
    driver: str,
    cuda: str,
    product: str,
    compute: str,
    family: str,
    count: int,
    arch: str = "amd64",
    nodepool: str | None = None,
    taints: list[dict[str, str]] | None = None,
    memory_mib: int = 15360,
    deprecated_driver_labels: bool = False,
    extra_labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A Node as a GFD-labelled GPU node looks (label set as GFD v0.17 writes it)."""
    major, minor, *rest = driver.split(".")
    revision = rest[0] if rest else ""
    cuda_major, cuda_minor = cuda.split(".")
    cc_major, cc_minor = compute.split(".")
    labels = {
        "beta.kubernetes.io/arch": arch,
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": arch,
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": "g4dn.xlarge" if "T4" in product else "p5.48xlarge",
        "topology.kubernetes.io/zone": "us-east-1a",
        "feature.node.kubernetes.io/pci-10de.present": "true",
        "nvidia.com/cuda.runtime-version.major": cuda_major,
        "nvidia.com/cuda.runtime-version.minor": cuda_minor,
        "nvidia.com/cuda.runtime-version.full": cuda,
        "nvidia.com/cuda.runtime.major": cuda_major,
        "nvidia.com/cuda.runtime.minor": cuda_minor,
        "nvidia.com/gfd.timestamp": str(1724632719 + len(name)),
        "nvidia.com/gpu.compute.major": cc_major,
        "nvidia.com/gpu.compute.minor": cc_minor,
        "nvidia.com/gpu.count": str(count),
        "nvidia.com/gpu.family": family,
        "nvidia.com/gpu.machine": "g4dn.xlarge" if "T4" in product else "p5.48xlarge",
        "nvidia.com/gpu.memory": str(memory_mib),
        "nvidia.com/gpu.mode": "compute",
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": product,
        "nvidia.com/gpu.replicas": "1",
        "nvidia.com/gpu.sharing-strategy": "none",
        "nvidia.com/mig.capable": "false",
        "nvidia.com/mig.strategy": "single",
        "nvidia.com/mps.capable": "false",
        "nvidia.com/vgpu.present": "false",
    }
    driver_labels = {
        "nvidia.com/cuda.driver.major": major,
        "nvidia.com/cuda.driver.minor": minor,
        "nvidia.com/cuda.driver.rev": revision,
    }
    if not deprecated_driver_labels:
        driver_labels.update(
            {
                "nvidia.com/cuda.driver-version.major": major,
                "nvidia.com/cuda.driver-version.minor": minor,
                "nvidia.com/cuda.driver-version.revision": revision,
                "nvidia.com/cuda.driver-version.full": driver,
            }
        )
    labels.update(driver_labels)
    if nodepool:
        labels["eks.amazonaws.com/nodegroup"] = nodepool
    labels.update(extra_labels or {})
    return {
        "metadata": {"name": name, "uid": f"uid-{name}", "labels": labels, "creationTimestamp": "2026-08-01T00:00:00Z"},
        "spec": {"providerID": f"aws:///us-east-1a/i-{name}", **({"taints": taints} if taints else {})},
        "status": {
            "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110", "nvidia.com/gpu": str(count)},
            "allocatable": {"cpu": "7910m", "memory": "30Gi", "pods": "110", "nvidia.com/gpu": str(count)},
            "nodeInfo": {"architecture": arch, "kubeletVersion": "v1.30.2", "containerRuntimeVersion": "containerd://1.7.20"},
        },
    }


def scheduler_event(namespace: str, pod: str, message: str, at: str = "2026-12-02T06:00:00.123456Z") -> dict[str, Any]:
    """A FailedScheduling event as the scheduler writes it (events.k8s.io/v1) and core/v1 serves
    it: ``count``, ``firstTimestamp``, ``lastTimestamp`` and ``source.component`` are null."""
    return {
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": f"{pod}.{''.join(ch for ch in at if ch.isdigit())[-12:]}", "namespace": namespace, "creationTimestamp": at[:19] + "Z"},
        "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": pod, "namespace": namespace},
        "reason": "FailedScheduling", "message": message, "type": "Warning",
        "source": {}, "count": None, "firstTimestamp": None, "lastTimestamp": None,
        "eventTime": at, "action": "Scheduling", "reportingComponent": "default-scheduler",
        "reportingInstance": "default-scheduler-control-plane",
    }


def not_ready(node: dict[str, Any], unreachable: bool = True) -> dict[str, Any]:
    """The node after its kubelet stopped reporting: Ready Unknown and the node-lifecycle
    controller's taints (``unreachable``), or Ready False with ``not-ready`` (kubelet says so)."""
    key = "node.kubernetes.io/unreachable" if unreachable else "node.kubernetes.io/not-ready"
    status = "Unknown" if unreachable else "False"
    reason = "NodeStatusUnknown" if unreachable else "KubeletNotReady"
    message = "Kubelet stopped posting node status." if unreachable else "container runtime network not ready"
    node["status"]["conditions"] = [{"type": "Ready", "status": status, "reason": reason, "message": message}]
    kept = [t for t in node["spec"].get("taints") or [] if not t["key"].startswith("node.kubernetes.io/")]
    node["spec"]["taints"] = kept + [
        {"key": key, "effect": "NoSchedule", "timeAdded": "2026-12-02T05:59:00Z"},
        {"key": key, "effect": "NoExecute", "timeAdded": "2026-12-02T05:59:05Z"},
    ]
    return node


def cpu_node(name: str) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/arch": "amd64", "kubernetes.io/hostname": name, "kubernetes.io/os": "linux"},
        },
        "spec": {},
        "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}},
    }


def daemonset(
    namespace: str,
    name: str,
    image: str,
    env: dict[str, str] | None = None,
    args: list[str] | None = None,
    node_selector: dict[str, str] | None = None,
    affinity_terms: list[dict[str, Any]] | None = None,
    command: list[str] | None = None,
) -> dict[str, Any]:
    container: dict[str, Any] = {"name": name, "image": image}
    if env:
        container["env"] = [{"name": k, "value": v} for k, v in env.items()]
    if args:
        container["args"] = args
    if command:
        container["command"] = command
    pod: dict[str, Any] = {"containers": [container], "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}]}
    if node_selector:
        pod["nodeSelector"] = node_selector
    if affinity_terms:
        pod["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": affinity_terms}}}
    return {
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": {"matchLabels": {"app": name}}, "template": {"metadata": {"labels": {"app": name}}, "spec": pod}},
        "status": {"desiredNumberScheduled": 1, "numberReady": 1},
    }


def runtimeclass(name: str, handler: str, node_selector: dict[str, str] | None = None) -> dict[str, Any]:
    rc: dict[str, Any] = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": name}, "handler": handler}
    if node_selector:
        rc["scheduling"] = {"nodeSelector": node_selector}
    return rc


def clusterpolicy(toolkit: str, device_plugin: str, mig_strategy: str = "single", cdi_default: bool = False) -> dict[str, Any]:
    return {
        "apiVersion": "nvidia.com/v1",
        "kind": "ClusterPolicy",
        "metadata": {"name": "cluster-policy"},
        "spec": {
            "operator": {"defaultRuntime": "containerd"},
            "mig": {"strategy": mig_strategy},
            "cdi": {"enabled": cdi_default, "default": cdi_default},
            "toolkit": {"enabled": True, "repository": "nvcr.io/nvidia/k8s", "image": "container-toolkit", "version": toolkit},
            "devicePlugin": {
                "enabled": True,
                "repository": "nvcr.io/nvidia",
                "image": "k8s-device-plugin",
                "version": device_plugin,
                "env": [{"name": "DEVICE_LIST_STRATEGY", "value": "volume-mounts"}],
            },
        },
    }


# --- DRA objects as resource.k8s.io/v1 serves them (v1.34+) -----------------------------------


def device_class(name: str, selectors: list[str], extended_resource: str | None = None) -> dict[str, Any]:
    """A DeviceClass the way NVIDIA's DRA driver chart creates ``gpu.nvidia.com`` (CEL selectors under ``spec.selectors``)."""
    spec: dict[str, Any] = {"selectors": [{"cel": {"expression": e}} for e in selectors]}
    if extended_resource:
        spec["extendedResourceName"] = extended_resource
    return {"metadata": {"name": name, "uid": f"uid-dc-{name}", "resourceVersion": "101", "generation": 1,
                         "creationTimestamp": "2026-12-01T07:00:00Z"}, "spec": spec}


GPU_CLASS_SELECTOR = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"


def gpu_device(index: int, product: str = "NVIDIA A100-SXM4-80GB", architecture: str = "Ampere", compute: str = "8.0.0",
               driver: str = "580.95.5", cuda: str = "13.0.0", memory: str = "80Gi") -> dict[str, Any]:
    """One GPU as the NVIDIA DRA kubelet plugin publishes it (cmd/gpu-kubelet-plugin/deviceinfo.go attributes)."""
    return {"name": f"gpu-{index}", "attributes": {
        "type": {"string": "gpu"}, "uuid": {"string": f"GPU-{index:08d}-aaaa-bbbb-cccc-0123456789ab"},
        "productName": {"string": product}, "brand": {"string": "Nvidia"}, "architecture": {"string": architecture},
        "cudaComputeCapability": {"version": compute}, "driverVersion": {"version": driver},
        "cudaDriverVersion": {"version": cuda}, "pciBusID": {"string": f"0000:{index + 16:02x}:00.0"},
        "addressingMode": {"string": "None"}},
        "capacity": {"memory": {"value": memory}}}


def resource_slice(node: str, devices: list[dict[str, Any]], driver: str = "gpu.nvidia.com") -> dict[str, Any]:
    return {"metadata": {"name": f"{node}-{driver}-x7k2p", "uid": f"uid-rs-{node}", "resourceVersion": "120",
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": node, "uid": f"uid-{node}", "controller": True}],
                         "creationTimestamp": "2026-12-01T07:05:00Z"},
            "spec": {"driver": driver, "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "devices": devices}}


def claim_spec(device_class_name: str = "gpu.nvidia.com", selectors: list[str] | None = None, count: int = 1) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": device_class_name, "allocationMode": "ExactCount", "count": count}
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    return {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}


def resource_claim(namespace: str, name: str, spec: dict[str, Any], allocated_on: str | None = None,
                   reserved_for: list[str] = (), driver: str = "gpu.nvidia.com") -> dict[str, Any]:
    """A ResourceClaim; ``allocated_on`` fills ``status.allocation`` as the scheduler writes it (device
    results and a node selector on ``metadata.name``), ``reserved_for`` the consumer pods."""
    claim: dict[str, Any] = {"metadata": {"name": name, "namespace": namespace, "uid": f"uid-rc-{name}", "resourceVersion": "130",
                                          "creationTimestamp": "2026-12-01T08:00:00Z"}, "spec": spec, "status": {}}
    if allocated_on:
        claim["metadata"]["finalizers"] = ["resource.kubernetes.io/delete-protection"]
        claim["status"]["allocation"] = {
            "devices": {"results": [{"request": "gpu", "driver": driver, "pool": allocated_on, "device": "gpu-0"}]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [allocated_on]}]}]},
        }
    if reserved_for:
        claim["status"]["reservedFor"] = [{"resource": "pods", "name": p, "uid": f"uid-pod-{p}"} for p in reserved_for]
    return claim


def resource_claim_template(namespace: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": namespace, "uid": f"uid-rct-{name}", "resourceVersion": "110",
                         "creationTimestamp": "2026-12-01T07:30:00Z"}, "spec": {"spec": spec}}
