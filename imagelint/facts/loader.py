"""The dynamic loader's view of an image: which directories it searches, and why.

Order (glibc ld.so): ``LD_LIBRARY_PATH`` (env, in order), then the directories
``ldconfig`` put in ``/etc/ld.so.cache`` from ``/etc/ld.so.conf`` and its
``include`` globs, then the built-in defaults for the architecture. The cache
itself is not read: it is what ``ldconfig`` made of ld.so.conf at build time.
"""

from __future__ import annotations

import posixpath
from dataclasses import replace

from imagelint.facts import names
from imagelint.facts.fsview import FilesystemView, file_provenance, norm, text_lines
from imagelint.facts.model import EnvSetting, LoaderFacts, LoaderPathEntry
from imagelint.image import Platform
from imagelint.layers.model import CaptureRule

CAPTURE_RULES = (
    CaptureRule("etc/ld.so.conf", "content", 64 * 1024),
    CaptureRule("etc/ld.so.conf.d/*", "content", 64 * 1024),
)

LD_SO_CONF = "etc/ld.so.conf"
MAX_INCLUDE_DEPTH = 8
MAX_CONF_FILES = 256

# glibc's trusted directories plus the Debian/Ubuntu multiarch ones, per architecture.
_MULTIARCH = {"amd64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu", "ppc64le": "powerpc64le-linux-gnu",
              "s390x": "s390x-linux-gnu", "arm": "arm-linux-gnueabihf", "386": "i386-linux-gnu"}


def default_dirs(platform: Platform | None) -> tuple[str, ...]:
    arch = platform.architecture if platform else "amd64"
    triplet = _MULTIARCH.get(arch)
    multi = (f"lib/{triplet}", f"usr/lib/{triplet}") if triplet else ()
    return multi + ("lib64", "usr/lib64", "lib", "usr/lib")


def ld_library_path_entries(env: tuple[EnvSetting, ...]) -> tuple[LoaderPathEntry, ...]:
    setting = next((e for e in reversed(env) if e.name == "LD_LIBRARY_PATH"), None)
    if setting is None:
        return ()
    out = []
    for part in setting.value.replace(";", ":").split(":"):
        part = part.strip()
        # Empty entries mean the working directory, and ${VAR} is not expanded by the runtime
        # (Docker expands ENV at build time): neither names a directory we can check.
        if part and part.startswith("/"):
            out.append(LoaderPathEntry(norm(part), "LD_LIBRARY_PATH", setting.provenance))
    return tuple(out)


def parse_ld_so_conf(data: bytes) -> list[tuple[str, str, int]]:
    """(kind, value, line): kind ``dir`` or ``include``; comments and ``hwcap`` lines dropped."""
    out: list[tuple[str, str, int]] = []
    for number, raw in enumerate(text_lines(data), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        word, _, rest = line.partition(" ")
        if word == "include":
            for pattern in rest.split():
                out.append(("include", pattern, number))
        elif word == "hwcap":
            continue
        else:
            for d in line.replace(",", " ").replace(":", " ").split():
                out.append(("dir", d.split("=", 1)[0], number))  # legacy "dir=TYPE"
    return out


def ld_so_conf_entries(fs: FilesystemView, warnings: list[str]) -> tuple[LoaderPathEntry, ...]:
    out: list[LoaderPathEntry] = []
    seen_files: set[str] = set()

    def visit(path: str, depth: int) -> None:
        resolved = fs.resolve(path)
        if resolved is None or resolved in seen_files or len(seen_files) >= MAX_CONF_FILES:
            return
        data = fs.read(resolved)
        if data is None:
            if fs.lookup(resolved) is not None:
                warnings.append(f"/{resolved}: loader config not captured")
            return
        seen_files.add(resolved)
        for kind, value, line in parse_ld_so_conf(data):
            if kind == "dir":
                out.append(LoaderPathEntry(norm(value), "ld.so.conf", file_provenance(fs, resolved, path, line)))
            elif depth < MAX_INCLUDE_DEPTH:
                pattern = value if value.startswith("/") else posixpath.join("/" + posixpath.dirname(resolved), value)
                for entry in fs.glob(norm(pattern)):
                    visit(entry.path, depth + 1)

    visit(LD_SO_CONF, 0)
    return tuple(out)


def loader_facts(env: tuple[EnvSetting, ...], fs: FilesystemView | None, platform: Platform | None,
                 warnings: list[str]) -> LoaderFacts:
    env_entries = ld_library_path_entries(env)
    defaults = default_dirs(platform)
    if fs is None:
        return LoaderFacts(ld_library_path=env_entries, defaults=defaults)
    conf_entries = ld_so_conf_entries(fs, warnings)
    facts = LoaderFacts(
        ld_library_path=tuple(_resolved(e, fs) for e in env_entries),
        ld_so_conf=tuple(_resolved(e, fs) for e in conf_entries),
        defaults=defaults,
    )
    resolved = tuple(dict.fromkeys(fs.resolve(d) or d for d in facts.directories))
    return replace(facts, resolved_directories=resolved)


def _resolved(entry: LoaderPathEntry, fs: FilesystemView) -> LoaderPathEntry:
    return replace(entry, resolved=fs.resolve(entry.directory))


class LoaderView:
    """Answers "which searched directories find a library at this path?" through symlinks.

    The one place loader-path resolution happens: facts (``DriverLibrary.on_loader_path``
    and ``loader_path_dirs``) are computed here, rules read them.
    """

    def __init__(self, loader: LoaderFacts, fs: FilesystemView) -> None:
        self._fs = fs
        # resolved directory -> the searched directories (as written) that are it, in search order
        self._written: dict[str, list[str]] = {}
        for d in loader.directories:
            self._written.setdefault(fs.resolve(d) or d, []).append(d)

    def _resolve_dir(self, directory: str) -> str:
        return self._fs.resolve(directory) or norm(directory)

    def dir_searched(self, directory: str) -> bool:
        return self._resolve_dir(directory) in self._written

    def dirs_finding(self, path: str, is_symlink: bool = False) -> tuple[str, ...]:
        """The searched directories (as written, search order) that find ``path``: its own
        directory, or, for a file, the directory of any symlink to it (a symlink entry is
        found only where it sits)."""
        if is_symlink:
            candidates = {norm(path)}
        else:
            candidates = {norm(path)} | {norm(a) for a in self._fs.aliases(self._fs.resolve(path) or path)}
        found = {d for c in candidates for d in self._written.get(self._resolve_dir(posixpath.dirname(c)), ())}
        return tuple(d for dirs in self._written.values() for d in dirs if d in found)

    def on_loader_path(self, path: str) -> bool:
        """True when the file, or a symlink to it, sits in a searched directory."""
        return bool(self.dirs_finding(path))


__all__ = ["CAPTURE_RULES", "LoaderView", "default_dirs", "loader_facts", "parse_ld_so_conf", "names"]
