"""Small helpers every fact module shares: the filesystem view it reads, provenance, env."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Protocol

from imagelint.facts.model import EnvSetting, Provenance
from imagelint.image import ImageConfig

if TYPE_CHECKING:  # a view of entries a layer read made: a warm check reads none
    from imagelint.layers.model import Entry


class FilesystemView(Protocol):
    """The part of ``imagelint.layers.filesystem.ImageFilesystem`` the facts use."""

    def entry(self, path: str) -> Entry | None: ...
    def resolve(self, path: str) -> str | None: ...
    def lookup(self, path: str) -> Entry | None: ...
    def read(self, path: str) -> bytes | None: ...
    def scan(self, path: str) -> Any | None: ...
    def glob(self, pattern: str) -> list[Entry]: ...
    def entries(self) -> Iterator[Entry]: ...
    def listdir(self, path: str) -> list[str]: ...
    def aliases(self, path: str) -> list[str]: ...


def norm(path: str) -> str:
    """A path as the filesystem returns them: no leading '/', no '.' parts, no trailing '/'."""
    parts: list[str] = []
    for p in path.split("/"):
        if p in ("", "."):
            continue
        if p == "..":
            if parts:
                parts.pop()
            continue
        parts.append(p)
    return "/".join(parts)


def file_provenance(fs: FilesystemView, path: str, via: str | None = None, line: int | None = None) -> Provenance:
    """Provenance of a file in the image: resolved path, the path it was reached as, its layer."""
    resolved = fs.resolve(path) or norm(path)
    entry = fs.lookup(resolved) or fs.entry(resolved)
    via_n = norm(via) if via else None
    return Provenance(
        kind="file",
        path=resolved,
        via=via_n if via_n and via_n != resolved else None,
        layer_digest=entry.layer_digest if entry else None,
        layer_index=entry.layer_index if entry else None,
        line=line,
    )


def env_provenance(name: str) -> Provenance:
    return Provenance(kind="env", key=name)


def effective_env(config: ImageConfig) -> tuple[EnvSetting, ...]:
    """The env as the container gets it: one setting per name, the last assignment winning."""
    last: dict[str, str] = {}
    for name, value in config.env:
        last.pop(name, None)
        last[name] = value
    return tuple(EnvSetting(n, v, env_provenance(n)) for n, v in last.items())


def text_lines(data: bytes) -> list[str]:
    """Decode captured text leniently (scripts may hold any bytes)."""
    return data.decode("utf-8", "replace").splitlines()


def preferred_via(fs: FilesystemView, resolved: str, prefer_prefixes: tuple[str, ...]) -> str | None:
    """The alias of ``resolved`` that a person would name (``usr/local/cuda/...`` over ``usr/local/cuda-12.4/...``)."""
    aliases = [norm(a) for a in fs.aliases(resolved)]
    for prefix in prefer_prefixes:
        for a in sorted(aliases):
            if a.startswith(prefix) and a != resolved:
                return a
    return None
