"""The CUDA driver *stub* library is on the runtime loader path.

``/usr/local/cuda/lib64/stubs/libcuda.so`` exists only so that programs can be
*linked* without a driver. When ``LD_LIBRARY_PATH`` or ``ld.so.conf`` puts the
``stubs`` directory on the runtime search path, processes load the stub instead
of the host driver and every CUDA call fails (``CUDA_ERROR_STUB_LIBRARY``,
"CUDA driver is a stub library"). ``LIBRARY_PATH`` (link time only) is fine.
The directory counts wherever the image's symlinks take it: in the devel images
``/usr/local/cuda/lib64/stubs`` is ``/usr/local/cuda-X.Y/targets/x86_64-linux/lib/stubs``.
With the layers read, only a directory that really finds the ``libcuda.so`` stub
is reported; from the image config alone, a directory named ``stubs``.

Remediation: use ``LIBRARY_PATH`` (or ``-L``) for the stubs directory, never
``LD_LIBRARY_PATH`` or ``/etc/ld.so.conf.d``.

Anti-pattern::

    ENV LD_LIBRARY_PATH=/usr/local/cuda/lib64/stubs:$LD_LIBRARY_PATH

Best practice::

    ENV LIBRARY_PATH=/usr/local/cuda/lib64/stubs
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

from imagelint.facts.fsview import norm
from imagelint.facts.model import LoaderPathEntry
from imagelint.rules.base import (
    ERROR,
    NEEDS_CONFIG,
    NEEDS_FILES,
    Finding,
    FindingFactory,
    RuleContext,
)

ID = "IL202"
NAME = "cuda-stubs-on-loader-path"
SEVERITY = ERROR
TITLE = "CUDA stubs directory on the runtime loader path"
NEEDS = (NEEDS_CONFIG, NEEDS_FILES)
REFERENCES = ("https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html",)
REMEDIATION = "Put the stubs directory on LIBRARY_PATH (link time), not LD_LIBRARY_PATH or ld.so.conf."

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)


def _norm(path: str) -> str:
    return "/" + norm(path)


def check(ctx: RuleContext) -> Iterator[Finding]:
    facts = ctx.facts
    # The facts layer resolved the image's symlinks once: the loader path directories that find
    # each stub libcuda (lib64 -> targets/x86_64-linux/lib, cuda -> cuda-12.4 and the like).
    reaching = {norm(d) for lib in facts.driver_libraries
                if lib.role == "stub" and lib.name.startswith("libcuda.so") for d in lib.loader_path_dirs}
    entries: list[LoaderPathEntry] = list(facts.loader.ld_library_path) + list(facts.loader.ld_so_conf)
    seen = set()
    for entry in entries:
        d = _norm(entry.directory)
        if d in seen:
            continue
        if facts.complete:
            # With layers read, only a directory that really finds the libcuda stub counts.
            if norm(entry.directory) not in reaching:
                continue
        elif posixpath.basename(d) != "stubs":
            # Config only: a directory named stubs on the path is reported as what it almost always is.
            continue
        seen.add(d)
        held = "holds the libcuda.so stub" if facts.complete else "is a stubs directory (layers not read)"
        yield finding(
            f"{entry.origin} puts {d} on the runtime loader path: CUDA fails with CUDA_ERROR_STUB_LIBRARY",
            entry.provenance, details=[f"the directory {held}: processes load the stub instead of the host driver"], directory=d, origin=entry.origin,
        )
