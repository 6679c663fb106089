"""The CUDA driver *stub* library is on the runtime loader path.

``/usr/local/cuda/lib64/stubs/libcuda.so`` exists only so that programs can be
*linked* without a driver. When ``LD_LIBRARY_PATH`` or ``ld.so.conf`` puts the
``stubs`` directory on the runtime search path, processes load the stub instead
of the host driver and every CUDA call fails (``CUDA_ERROR_STUB_LIBRARY``,
"CUDA driver is a stub library"). ``LIBRARY_PATH`` (link time only) is fine.

Remediation: use ``LIBRARY_PATH`` (or ``-L``) for the stubs directory, never
``LD_LIBRARY_PATH`` or ``/etc/ld.so.conf.d``.

Anti-pattern::

    ENV LD_LIBRARY_PATH=/usr/local/cuda/lib64/stubs:$LD_LIBRARY_PATH

Best practice::

    ENV LIBRARY_PATH=/usr/local/cuda/lib64/stubs
"""

from __future__ import annotations

import posixpath
from typing import Iterator

from imagelint.facts.model import DriverLibrary, LoaderPathEntry
from imagelint.rules.base import ERROR, NEEDS_CONFIG, NEEDS_FILES, Finding, FindingFactory, RuleContext

ID = "IL202"
NAME = "cuda-stubs-on-loader-path"
SEVERITY = ERROR
TITLE = "CUDA stubs directory on the runtime loader path"
NEEDS = (NEEDS_CONFIG, NEEDS_FILES)
TAGS = ("gpu", "driver-libraries", "loader")
REFERENCES = ("https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html",)
REMEDIATION = "Put the stubs directory on LIBRARY_PATH (link time), not LD_LIBRARY_PATH or ld.so.conf."

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)


def _norm(path: str) -> str:
    # lstrip first: normpath keeps a leading "//" (POSIX gives it a meaning of its own).
    return posixpath.normpath("/" + path.strip().lstrip("/")).rstrip("/")


def _stub_dirs(stubs: list[DriverLibrary]) -> set[str]:
    dirs = set()
    for lib in stubs:
        for p in (lib.path, lib.provenance.via, lib.provenance.path):
            if p:
                dirs.add(_norm(posixpath.dirname(_norm(p))))
    return dirs


def check(ctx: RuleContext) -> Iterator[Finding]:
    facts = ctx.facts
    stubs = [d for d in facts.driver_libraries if d.role == "stub" and d.name.startswith("libcuda.so")]
    stub_dirs = _stub_dirs(stubs)
    entries: list[LoaderPathEntry] = list(facts.loader.ld_library_path) + list(facts.loader.ld_so_conf)
    seen = set()
    for entry in entries:
        d = _norm(entry.directory)
        if posixpath.basename(d) != "stubs" or d in seen:
            continue
        # With layers read, only a stubs dir that really holds libcuda counts; config-only,
        # a directory named stubs on the path is reported as what it almost always is.
        if facts.complete and d not in stub_dirs and not _same_tail(d, stub_dirs):
            continue
        seen.add(d)
        held = "holds the libcuda.so stub" if facts.complete else "is a stubs directory (layers not read)"
        yield finding(
            f"{entry.origin} puts {d} on the runtime loader path and it {held}: processes load the stub "
            f"instead of the host driver and CUDA fails with CUDA_ERROR_STUB_LIBRARY",
            entry.provenance, directory=d, origin=entry.origin,
        )


def _same_tail(d: str, dirs: set[str]) -> bool:
    # /usr/local/cuda/lib64/stubs is usually reached through the cuda -> cuda-X.Y symlink.
    tail = "/".join(d.split("/")[-2:])
    return any(x.endswith("/" + tail) and "cuda" in x and "cuda" in d for x in dirs)
