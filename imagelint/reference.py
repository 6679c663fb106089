"""The one image-reference grammar, with syft-style scheme prefixes.

    registry:HOST/REPO[:TAG][@DIGEST]   a registry, no daemon
    docker:NAME[:TAG]                   the local Docker daemon
    docker-archive:PATH[:REPO:TAG]      a `docker save` tarball (classic or OCI-in-tar)
    oci-dir:PATH[:TAG]                  an OCI image layout directory
    oci-archive:PATH[:TAG]              an OCI image layout in a tar
    anything else                       an existing path (kind sniffed), else a name:
                                        the daemon if it has it, then the registry

A reference that looks like a path (starts with ``./``, ``../``, ``/`` or ``~``, or ends in
``.tar``, ``.tar.gz``, ``.tgz``) is a path: when it does not exist it is "no such file"
(SourceError, exit 3 like any image that cannot be read), never a registry lookup. A registry
image whose name ends that way is written ``registry:NAME``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from imagelint.errors import SourceError, UsageError
from imagelint.lazyre import lazy_pattern

SCHEMES = ("registry", "docker", "docker-archive", "oci-dir", "oci-archive")

DOCKER_HUB = "docker.io"
_HUB_ALIASES = {"docker.io", "index.docker.io", "registry-1.docker.io", "registry.hub.docker.com"}

# distribution/reference grammar (simplified but faithful for real names).
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_REPO_RE = lazy_pattern(rf"^{_COMPONENT}(?:/{_COMPONENT})*$")
_TAG_RE = lazy_pattern(r"^[\w][\w.-]{0,127}$")
_DIGEST_RE = lazy_pattern(r"^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-fA-F0-9]{32,}$")
_PATH_PREFIXES = ("./", "../", "/", "~")
_ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz")


def looks_like_path(text: str) -> bool:
    """``./x``, ``../x``, ``/x``, ``~/x``, ``x.tar``, ``x.tar.gz``: meant as a file, not an image name."""
    return text.startswith(_PATH_PREFIXES) or text.lower().endswith(_ARCHIVE_SUFFIXES) or text in (".", "..")


@dataclass(frozen=True)
class ImageReference:
    """A parsed reference: its kind and what it points at.

    ``kind`` is one of SCHEMES, or ``auto`` for a bare name that is not an
    existing path (daemon first, then registry). For path kinds ``value`` is
    the path and ``tag`` an optional tag/ref name inside a layout.
    """

    kind: str
    value: str
    tag: str | None = None
    text: str = ""

    def __str__(self) -> str:
        return self.text or f"{self.kind}:{self.value}"


@dataclass(frozen=True)
class RegistryName:
    """A normalised registry reference (``ubuntu`` → ``docker.io/library/ubuntu:latest``)."""

    registry: str
    repository: str
    tag: str | None = None
    digest: str | None = None

    @property
    def reference(self) -> str:
        """What goes after /manifests/: the digest if pinned, else the tag."""
        return self.digest or self.tag or "latest"

    @property
    def api_host(self) -> str:
        """The host that serves the distribution API (Docker Hub's differs from its name)."""
        return "registry-1.docker.io" if self.registry == DOCKER_HUB else self.registry

    def __str__(self) -> str:
        s = f"{self.registry}/{self.repository}"
        if self.tag:
            s += f":{self.tag}"
        if self.digest:
            s += f"@{self.digest}"
        return s


# USER[:PASSWORD]@ before the first "/" (after an optional scheme): credentials, never a digest.
_USERINFO = lazy_pattern(r"^(?:[a-z][a-z0-9+.-]*://)?[^/@]*@[^/@]*/")


# A registry host as docker's reference grammar has it: DNS labels or a bracketed IPv6 address, then
# an optional port of ASCII digits (a pod may name "127.0.0.1:²/app" or "[::1/app"; urllib3 then fails).
_REGISTRY_HOST = lazy_pattern(r"(?:(?:[A-Za-z0-9_-]+\.)*[A-Za-z0-9_-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?")
_PORT_END = lazy_pattern(r":[0-9]{1,5}$")


def shown_reference(text: str) -> str:
    """``text`` fit to show in a message: any ``user:password@`` replaced by ``***@``."""
    return re.sub(r"^((?:[a-z][a-z0-9+.-]*://)?)[^/@]*@(?=[^/@]*/)", r"\1***@", text)


def parse_registry_name(text: str) -> RegistryName:
    """Parse and normalise a registry image name, as docker does."""
    name = text.strip()
    if not name:
        raise UsageError("empty image name")
    if _USERINFO.match(name):
        # user:password@host/repo: a password on the command line ends up in logs; it is never echoed.
        raise UsageError(f"image reference {shown_reference(name)!r} carries credentials: put them in the "
                         "docker config (docker login), not in the reference")
    digest = None
    if "@" in name:
        name, digest = name.split("@", 1)
        if not _DIGEST_RE.match(digest):
            raise UsageError(f"invalid digest in image reference {shown_reference(text)!r}")
    tag = None
    last = name.rsplit("/", 1)[-1]
    if ":" in last:
        name, tag = name.rsplit(":", 1)
        if not _TAG_RE.match(tag):
            raise UsageError(f"invalid tag {tag!r} in image reference {shown_reference(text)!r}")
    first, _, rest = name.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        registry, repository = first, rest
    else:
        registry, repository = DOCKER_HUB, name
    if not _REGISTRY_HOST.fullmatch(registry) or not 0 < int(registry.rpartition(":")[2] if _PORT_END.search(registry) else "1") <= 65535:
        raise UsageError(f"invalid registry host {registry!r} in image reference {shown_reference(text)!r} "
                         "(expected HOST, HOST:PORT or [IPv6]:PORT)")
    if registry.lower() in _HUB_ALIASES:
        registry = DOCKER_HUB
    if registry == DOCKER_HUB and "/" not in repository:
        repository = f"library/{repository}"
    if not _REPO_RE.match(repository):
        raise UsageError(f"invalid repository name {repository!r} in image reference {shown_reference(text)!r}")
    if tag is None and digest is None:
        tag = "latest"
    return RegistryName(registry, repository, tag, digest)


def _split_path_tag(value: str) -> tuple[str, str | None]:
    """``PATH[:TAG]`` where PATH may itself contain ':' only if it exists as given."""
    if os.path.exists(value) or ":" not in value:
        return value, None
    path, tag = value.rsplit(":", 1)
    if "/" in tag or not tag:
        return value, None
    return path, tag


def _split_archive_tag(value: str) -> tuple[str, str | None]:
    """``PATH[:REPO:TAG]``: the tag starts after the first ':' whose prefix is an existing file."""
    if os.path.exists(value):
        return value, None
    i = value.find(":")
    while i != -1:
        if os.path.isfile(value[:i]):
            return value[:i], value[i + 1 :] or None
        i = value.find(":", i + 1)
    return value, None


def parse_reference(text: str) -> ImageReference:
    """Parse a user-given reference into kind and value (no I/O beyond os.path checks)."""
    if not text or not text.strip():
        raise UsageError("empty image reference")
    text = text.strip()
    scheme, sep, rest = text.partition(":")
    if sep and scheme in SCHEMES and not rest.startswith("//"):
        if not rest:
            raise UsageError(f"image reference {shown_reference(text)!r} names no image after '{scheme}:'")
        rest = os.path.expanduser(rest) if rest.startswith("~") else rest
        if scheme in ("oci-dir", "oci-archive"):
            path, tag = _split_path_tag(rest)
            return ImageReference(scheme, path, tag, text)
        if scheme == "docker-archive":
            path, tag = _split_archive_tag(rest)
            return ImageReference(scheme, path, tag, text)
        if scheme == "registry":
            parse_registry_name(rest)  # validate early, with a clear message
        return ImageReference(scheme, rest, None, text)
    local = os.path.expanduser(text) if text.startswith("~") else text
    if os.path.exists(local):
        return ImageReference(sniff_path_kind(local), local, None, text)
    path, tag = _split_path_tag(local)
    if tag is not None and os.path.isdir(path):
        return ImageReference("oci-dir", path, tag, text)
    if looks_like_path(text) or (tag is not None and looks_like_path(path)):
        from imagelint.escape import printable

        # The reference as typed, on one line: a name may hold a newline or a control character.
        raise SourceError(f"{printable(shown_reference(text))}: no such file or directory")
    parse_registry_name(text)
    return ImageReference("auto", text, None, text)


def sniff_path_kind(path: str) -> str:
    """Tell an OCI layout directory, an OCI archive and a docker-save archive apart."""
    if os.path.isdir(path):
        if os.path.isfile(os.path.join(path, "oci-layout")) or os.path.isfile(os.path.join(path, "index.json")):
            return "oci-dir"
        raise UsageError(f"{path}: a directory but not an OCI image layout (no oci-layout or index.json)")
    import tarfile

    try:
        with tarfile.open(path, "r:*") as tf:
            names = set()
            for i, member in enumerate(tf):
                names.add(member.name.lstrip("./"))
                if i > 10_000:
                    break
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise UsageError(f"{path}: not a docker-save or OCI archive ({exc.__class__.__name__})") from None
    if "manifest.json" in names:
        return "docker-archive"  # classic, or Docker 25+ OCI-in-tar (both have manifest.json)
    if "oci-layout" in names or "index.json" in names:
        return "oci-archive"
    raise UsageError(f"{path}: a tar archive but neither a docker-save archive nor an OCI layout")
