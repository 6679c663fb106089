"""Wheels of the distributions installed in this environment, for an offline ``pip install``.

A fresh virtualenv must get imagelint's dependencies without the network, yet through pip's
resolver (so wrong dependency metadata fails): each installed dependency is packed back into a
wheel from its own RECORD (files, dist-info, original tags), and ``pip install --no-index
--find-links DIR`` installs from those.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import importlib.metadata as md
import io
import re
import zipfile
from pathlib import Path

from packaging.requirements import Requirement


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def wheel_requires(wheel: Path) -> list[str]:
    """The ``Requires-Dist`` lines of a built wheel."""
    with zipfile.ZipFile(wheel) as zf:
        meta = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        text = zf.read(meta).decode()
    return [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Requires-Dist:")]


def closure(requires: list[str], extras: tuple[str, ...] = ()) -> dict[str, md.Distribution]:
    """The installed distributions that ``requires`` (with ``extras``) needs, by canonical name."""
    out: dict[str, md.Distribution] = {}
    todo: list[tuple[str, tuple[str, ...]]] = []
    for r in requires:
        req = Requirement(r)
        if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in ("", *extras)):
            todo.append((req.name, tuple(req.extras)))
    while todo:
        name, wanted = todo.pop()
        key = canonical(name)
        if key in out:
            continue
        dist = md.distribution(name)
        out[key] = dist
        for r in dist.requires or []:
            req = Requirement(r)
            if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in ("", *wanted)):
                todo.append((req.name, tuple(req.extras)))
    return out


def _hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def rewheel(dist: md.Distribution, dest: Path) -> Path:
    """Pack an installed distribution into ``dest`` as a wheel with its original tag."""
    files = [f for f in dist.files or [] if ".." not in f.parts and not str(f).endswith((".pyc", "RECORD", "INSTALLER",
                                                                                          "REQUESTED", "direct_url.json"))]
    info_dir = next(str(f.parts[0]) for f in dist.files if str(f.parts[0]).endswith(".dist-info"))
    wheel_meta = dist.read_text("WHEEL") or ""
    tags = [line.split(":", 1)[1].strip() for line in wheel_meta.splitlines() if line.startswith("Tag:")]
    tag = next((t for t in tags if t.startswith(("py3", "cp3"))), tags[0] if tags else "py3-none-any")  # py2+py3: py3
    name = re.sub(r"[-.]+", "_", dist.metadata["Name"])
    path = dest / f"{name}-{dist.version}-{tag}.whl"
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        for f in files:
            src = Path(dist.locate_file(f))
            if not src.is_file():
                continue
            data = src.read_bytes()
            zf.writestr(str(f), data)
            writer.writerow([str(f), _hash(data), len(data)])
        if "WHEEL" not in {Path(str(f)).name for f in files}:
            data = f"Wheel-Version: 1.0\nGenerator: rewheel\nRoot-Is-Purelib: true\nTag: {tag}\n".encode()
            zf.writestr(f"{info_dir}/WHEEL", data)
            writer.writerow([f"{info_dir}/WHEEL", _hash(data), len(data)])
        writer.writerow([f"{info_dir}/RECORD", "", ""])
        zf.writestr(f"{info_dir}/RECORD", record.getvalue())
    return path
