"""Compare the matrix with NVIDIA's redistributable manifests, so its CUDA rows do not rot.

NVIDIA publishes one machine-readable manifest per CUDA release,
``https://developer.download.nvidia.com/compute/cuda/redist/redistrib_X.Y.Z.json``: a JSON object
with ``release_label`` / ``release_date`` / ``release_product`` and one object per component
(``cuda_cudart``, ``cuda_nvcc``, ``nvidia_driver`` ...) carrying its ``version``. A maintainer
downloads the manifests (this module never touches the network) and runs::

    python3 -m imagelint.matrix.refresh [--matrix PATH] [--format text|json] redistrib_13.4.2.json ...

It reports, per manifest, the matrix rows that differ:

* ``missing-release``: no ``cuda_releases`` row for the release;
* ``min-driver``: the row's ``min_driver`` differs from the driver the manifest bundles
  (``nvidia_driver``; NVIDIA's release-notes table gives that same driver as the minimum);
* ``confirmable``: an ``uncertain`` row whose ``min_driver`` the manifest's driver confirms;
* ``no-bundled-driver``: the manifest bundles no driver (CUDA 13.4 on), so the minimum must come
  from the release notes;
* ``cudart``: an official-image env row (``cuda_image_env``) whose ``NV_CUDA_CUDART_VERSION``
  names another cudart than the manifest's ``cuda_cudart``;
* ``no-driver-branch``: no ``driver_branches`` row reports the release's CUDA major.minor.

Two more of NVIDIA's machine-readable files are read the same way:

* a **driver** redistributable manifest,
  ``https://developer.download.nvidia.com/compute/nvidia-driver/redist/redistrib_<driver>.json``
  (``release_product`` ``nvidia-driver``, ``release_label`` the driver version, components
  carrying ``cuda_variant``): ``missing-branch`` (no ``driver_branches`` row for its branch),
  ``branch-cuda`` (the row's ``max_cuda`` differs from the newest ``cuda_variant``) and
  ``confirmable``; a variant that names only a major (``"13"``) derives nothing;
* **PyPI's JSON metadata** of an NVIDIA wheel (``https://pypi.org/pypi/nvidia-cuda-runtime/json``,
  ``nvidia-cuda-nvcc``, their ``-cuXX`` names): a CUDA major.minor no ``cuda_releases`` row has
  (``missing-release``; a wheel names no driver, so it derives no row).

Exit status: 0 nothing differs, 1 something differs, 2 a manifest or the matrix could not be read.
The matrix itself is never changed: ``--write-overlay FILE`` writes the rows the manifests
determine (a release's row with its bundled driver as ``min_driver``, a branch's ``max_cuda``,
an uncertain row a manifest confirms), each citing its manifest, as a matrix overlay a person
reviews and copies into ``matrices/`` (the scheduled workflow in docs/matrix.md proposes it as a
pull request). Rows a manifest cannot determine (a floor without a bundled driver) are only
reported.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from imagelint.errors import ImagelintError
from imagelint.lazyre import lazy_pattern
from imagelint.localfile import read_regular_file
from imagelint.matrix.model import Matrix
from imagelint.matrix.versions import compare_versions, cuda_series, is_numeric_version
from imagelint.untrusted import loads_json
from imagelint.versions import version_key

MAX_MANIFEST_BYTES = 16 * 1024 * 1024  # real manifests are ~50 KiB
MAX_COMPONENTS = 1000  # components (or PyPI releases) looked at in one file: real ones have < 100
_DATE = lazy_pattern(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_DRIVER = lazy_pattern(r"[0-9]{3,4}\.[0-9]{1,3}(?:\.[0-9]{1,3})?")
_CUDA_VARIANT = lazy_pattern(r"(?:cuda)?([0-9]{1,2})(?:\.([0-9]{1,2}))?")
_WHEEL = lazy_pattern(r"nvidia-cuda-(runtime|nvcc)(?:-cu([0-9]{2}))?")
CUDA_REDIST = "https://developer.download.nvidia.com/compute/cuda/redist"
DRIVER_REDIST = "https://developer.download.nvidia.com/compute/nvidia-driver/redist"


class ManifestError(ValueError):
    """A file that is not a readable redistributable manifest; the message is one line."""


@dataclass(frozen=True)
class CudaManifest:
    """What the refresh compares: the release and the versions of the components it reads."""

    path: str
    release: str
    date: str | None
    cudart: str | None
    nvcc: str | None
    driver: str | None  # the bundled nvidia_driver, None from CUDA 13.4 on


@dataclass(frozen=True)
class DriverManifest:
    """A driver redistributable manifest: the driver and the CUDA versions it is built for."""

    path: str
    driver: str
    date: str | None
    cuda_variants: tuple[str, ...]  # as written: "13.5", or a bare major "13"

    @property
    def branch(self) -> int:
        return int(self.driver.split(".", 1)[0])

    @property
    def max_cuda(self) -> str | None:
        """The newest major.minor among the variants (None when they name majors only)."""
        full = [v for v in self.cuda_variants if "." in v]
        return max(full, key=version_key) if full else None


@dataclass(frozen=True)
class WheelMetadata:
    """PyPI's JSON metadata of one NVIDIA CUDA wheel: its newest version and upload date."""

    path: str
    package: str
    version: str
    date: str | None


@dataclass(frozen=True)
class Difference:
    """One way the matrix disagrees with a redistrib manifest or wheel metadata (``min-driver``...)."""

    manifest: str
    release: str
    kind: str
    message: str


def _load_json(path: Path) -> dict[str, Any]:
    """One JSON object from an untrusted file, bounded in size and depth."""
    try:
        data = read_regular_file(path, MAX_MANIFEST_BYTES + 1)  # a FIFO or device is refused, never waited on
    except OSError as exc:
        raise ManifestError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(data) > MAX_MANIFEST_BYTES:
        raise ManifestError(f"{path}: larger than {MAX_MANIFEST_BYTES} bytes; not a redistrib manifest")
    try:
        doc = loads_json(data.decode("utf-8"))
    except ValueError as exc:  # UntrustedInputError: not UTF-8, not JSON, nested too deep, a number out of range
        raise ManifestError(f"{path}: not JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise ManifestError(f"{path}: not a redistrib manifest (a JSON object is expected)")
    return doc


def read_any(path: Path) -> CudaManifest | DriverManifest | WheelMetadata:
    """A CUDA or driver redistributable manifest, or PyPI's metadata of an NVIDIA CUDA wheel."""
    doc = _load_json(path)
    if isinstance(doc.get("info"), dict) and "releases" in doc:
        return _wheel_metadata(path, doc)
    if doc.get("release_product") == "nvidia-driver":
        return _driver_manifest(path, doc)
    return _cuda_manifest(path, doc)


def read_manifest(path: Path) -> CudaManifest:
    """Parse one ``redistrib_X.Y.Z.json``. Raises ``ManifestError`` on anything else."""
    return _cuda_manifest(path, _load_json(path))


def _cuda_manifest(path: Path, doc: Mapping[str, Any]) -> CudaManifest:
    product = doc.get("release_product")
    if product is not None and product != "cuda":
        raise ManifestError(f"{path}: a {_shown(product)} manifest, not the CUDA toolkit's")
    release = doc.get("release_label")
    if not isinstance(release, str) or not is_numeric_version(release) or release.count(".") != 2:
        raise ManifestError(f"{path}: not a redistrib manifest (release_label {_shown(release)} is not X.Y.Z)")
    date = doc.get("release_date")
    return CudaManifest(str(path), release, date if isinstance(date, str) and _DATE.fullmatch(date) else None,
                    _component_version(doc, "cuda_cudart"), _component_version(doc, "cuda_nvcc"),
                    _component_version(doc, "nvidia_driver"))


def _component_version(doc: Mapping[str, Any], name: str) -> str | None:
    component = doc.get(name)
    version = component.get("version") if isinstance(component, dict) else None
    return version if isinstance(version, str) and is_numeric_version(version) else None


def _driver_manifest(path: Path, doc: Mapping[str, Any]) -> DriverManifest:
    driver = doc.get("release_label")
    if not isinstance(driver, str) or not _DRIVER.fullmatch(driver):
        raise ManifestError(f"{path}: not a driver manifest (release_label {_shown(driver)} is not a driver version)")
    variants: list[str] = []
    for _, component in zip(range(MAX_COMPONENTS), doc.values()):
        listed = component.get("cuda_variant") if isinstance(component, dict) else None
        for value in listed[:MAX_COMPONENTS] if isinstance(listed, list) else ():
            found = _CUDA_VARIANT.fullmatch(value) if isinstance(value, str) else None
            if found:
                variant = f"{int(found.group(1))}.{int(found.group(2))}" if found.group(2) else str(int(found.group(1)))
                if variant not in variants:
                    variants.append(variant)
    date = doc.get("release_date")
    return DriverManifest(str(path), driver, date if isinstance(date, str) and _DATE.fullmatch(date) else None,
                          tuple(variants))


def _wheel_metadata(path: Path, doc: Mapping[str, Any]) -> WheelMetadata:
    info = doc["info"]
    name, version = info.get("name"), info.get("version")
    if not isinstance(name, str) or not _WHEEL.fullmatch(name.lower().replace("_", "-")):
        raise ManifestError(f"{path}: PyPI metadata of {_shown(name)}, not of nvidia-cuda-runtime or nvidia-cuda-nvcc")
    if not isinstance(version, str) or not is_numeric_version(version) or version.count(".") != 2:
        raise ManifestError(f"{path}: PyPI metadata with version {_shown(version)}, not X.Y.Z")
    date = None
    releases = doc.get("releases")
    files = releases.get(version) if isinstance(releases, dict) else None
    for upload in files[:MAX_COMPONENTS] if isinstance(files, list) else ():
        stamp = upload.get("upload_time_iso_8601") if isinstance(upload, dict) else None
        if isinstance(stamp, str) and _DATE.match(stamp):
            date = min(date or stamp[:10], stamp[:10])
    return WheelMetadata(str(path), name.lower(), version, date)


def _shown(value: Any) -> str:
    """A value from an untrusted file, short and printable."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def differences(manifest: CudaManifest, matrix: Matrix) -> list[Difference]:
    """What the matrix says differently from ``manifest`` (an empty list: nothing)."""
    out: list[Difference] = []

    def say(kind: str, message: str) -> None:
        out.append(Difference(manifest.path, manifest.release, kind, message))

    row = next((r for r in matrix.rows("cuda_releases") if compare_versions(r["version"], manifest.release) == 0), None)
    released = f" (released {manifest.date})" if manifest.date else ""
    if row is None:
        bundled = f", bundled driver {manifest.driver}" if manifest.driver else ", no bundled driver"
        say("missing-release", f"CUDA {manifest.release}{released} has no cuda_releases row"
                               f" (cudart {manifest.cudart or '?'}{bundled})")
    elif manifest.driver is None:
        say("no-bundled-driver", f"CUDA {manifest.release}: the manifest bundles no driver; min_driver "
                                 f"{row['min_driver']} must come from the release notes' driver table")
    elif compare_versions(row["min_driver"], manifest.driver) != 0:
        say("min-driver", f"CUDA {manifest.release}: min_driver {row['min_driver']} differs from the bundled "
                          f"driver {manifest.driver}")
    elif row.get("confidence") == "uncertain":
        say("confirmable", f"CUDA {manifest.release}: the uncertain min_driver {row['min_driver']} is the "
                           f"bundled driver; the row can cite the manifest and drop confidence = \"uncertain\"")
    if manifest.cudart:
        for env_row in matrix.rows("cuda_image_env"):
            if compare_versions(env_row["version"], manifest.release) != 0:
                continue
            stated = next((e.split("=", 1)[1] for e in env_row["env"] if e.startswith("NV_CUDA_CUDART_VERSION=")), None)
            if stated and stated.split("-", 1)[0] != manifest.cudart:
                say("cudart", f"CUDA {manifest.release} ({env_row['arch']} {env_row['flavor']} image env): "
                              f"NV_CUDA_CUDART_VERSION {stated} names another cudart than the manifest's {manifest.cudart}")
    mm = cuda_series(manifest.release)
    if not any(cuda_series(r["max_cuda"]) == mm for r in matrix.rows("driver_branches")):
        say("no-driver-branch", f"CUDA {mm}: no driver_branches row reports it (which branch ships with it?)")
    return out


def driver_differences(manifest: DriverManifest, matrix: Matrix) -> list[Difference]:
    """What the matrix's ``driver_branches`` row of the manifest's branch says differently."""
    out: list[Difference] = []
    released = f" (released {manifest.date})" if manifest.date else ""
    row = next((r for r in matrix.rows("driver_branches") if r["branch"] == manifest.branch), None)
    newest = manifest.max_cuda
    if newest is None:
        variants = ", ".join(manifest.cuda_variants) or "none"
        out.append(Difference(manifest.path, manifest.driver, "no-cuda-minor",
                              f"driver {manifest.driver}{released}: cuda_variant ({variants}) names no CUDA major.minor, "
                              "so the branch's max_cuda cannot be derived"))
    elif row is None:
        out.append(Difference(manifest.path, manifest.driver, "missing-branch",
                              f"driver {manifest.driver}{released}: no driver_branches row for R{manifest.branch} "
                              f"(its cuda_variant says CUDA {newest})"))
    elif compare_versions(row["max_cuda"], newest) != 0:
        out.append(Difference(manifest.path, manifest.driver, "branch-cuda",
                              f"R{manifest.branch}: max_cuda {row['max_cuda']} differs from the manifest's cuda_variant {newest}"))
    elif row.get("confidence") == "uncertain":
        out.append(Difference(manifest.path, manifest.driver, "confirmable",
                              f"R{manifest.branch}: the uncertain max_cuda {row['max_cuda']} is the manifest's cuda_variant; "
                              "the row can cite the manifest and drop confidence = \"uncertain\""))
    return out


def wheel_differences(wheel: WheelMetadata, matrix: Matrix) -> list[Difference]:
    """A CUDA major.minor PyPI ships that the matrix has no ``cuda_releases`` row of."""
    mm = cuda_series(wheel.version)
    if any(cuda_series(r["version"]) == mm for r in matrix.rows("cuda_releases")):
        return []
    uploaded = f" (uploaded {wheel.date})" if wheel.date else ""
    return [Difference(wheel.path, wheel.version, "missing-release",
                       f"CUDA {mm}: PyPI has {wheel.package} {wheel.version}{uploaded} but no cuda_releases row is "
                       f"CUDA {mm} (a wheel names no driver: the row needs the release notes or the redistrib manifest)")]


def derived_rows(items: Sequence[CudaManifest | DriverManifest | WheelMetadata], matrix: Matrix) -> dict[str, list[dict[str, Any]]]:
    """The rows the manifests determine, each citing its manifest: a CUDA release's row (its
    bundled driver as the floor), a branch's newest CUDA, and uncertain rows a manifest confirms."""
    cuda_rows: dict[str, dict[str, Any]] = {}
    branch_rows: dict[int, dict[str, Any]] = {}
    for item in items:
        if isinstance(item, CudaManifest) and item.driver:
            row = next((r for r in matrix.rows("cuda_releases") if compare_versions(r["version"], item.release) == 0), None)
            confirms = row is not None and row.get("confidence") == "uncertain" and compare_versions(row["min_driver"], item.driver) == 0
            if row is None or confirms:
                major_, minor_, patch = item.release.split(".")
                new = dict(row or {}) if confirms else {
                    "version": item.release, "release_kind": "ga" if patch == "0" else "update",
                    "label": f"CUDA {major_}.{minor_} GA" if patch == "0" else f"CUDA {item.release}",
                    "min_driver": item.driver}
                new.pop("confidence", None)
                new["source"] = (f"{CUDA_REDIST}/redistrib_{item.release}.json (release_date {item.date or '?'}; "
                                 f"cuda_cudart {item.cudart or '?'}, cuda_nvcc {item.nvcc or '?'}, nvidia_driver {item.driver})")
                new["note"] = "derived by imagelint.matrix.refresh: the floor is the driver the manifest bundles"
                cuda_rows[item.release] = new
        elif isinstance(item, DriverManifest) and item.max_cuda:
            row = next((r for r in matrix.rows("driver_branches") if r["branch"] == item.branch), None)
            confirms = row is not None and row.get("confidence") == "uncertain" and compare_versions(row["max_cuda"], item.max_cuda) == 0
            if row is None or confirms:
                branch_rows[item.branch] = {
                    "branch": item.branch, "max_cuda": item.max_cuda,
                    "source": f"{DRIVER_REDIST}/redistrib_{item.driver}.json (release_date {item.date or '?'}; "
                              f"cuda_variant {', '.join(item.cuda_variants)})",
                    "note": "derived by imagelint.matrix.refresh from the driver manifest's cuda_variant"}
    out: dict[str, list[dict[str, Any]]] = {}
    if cuda_rows:
        out["cuda_releases"] = [cuda_rows[k] for k in sorted(cuda_rows, key=version_key)]
    if branch_rows:
        out["driver_branches"] = [branch_rows[k] for k in sorted(branch_rows)]
    return out


def overlay_text(rows: Mapping[str, Sequence[Mapping[str, Any]]], today: _dt.date) -> str:
    """The derived rows as a matrix overlay (``--matrix-overlay``, or to copy into matrices/)."""
    from imagelint.matrix.tomlout import dump_matrix

    meta = {"kind": "imagelint-matrix-overlay", "schema_version": 1, "data_version": today.isoformat(),
            "description": "rows derived by imagelint.matrix.refresh from NVIDIA's manifests; review before use"}
    return dump_matrix(meta, rows, header="Derived by python3 -m imagelint.matrix.refresh: each row cites the manifest it "
                                          "comes from. Review, then copy into the newest matrices/YYYY-MM-DD.toml.")


def _write_new(path: str, text: str) -> None:
    """Write ``text`` to ``path``, never through a symlink someone left there."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python3 -m imagelint.matrix.refresh",
        description="Report matrix rows that differ from NVIDIA's CUDA redistributable manifests (redistrib_X.Y.Z.json).")
    parser.add_argument("manifests", nargs="+", metavar="MANIFEST.json")
    parser.add_argument("--matrix", default=None, help="a matrix version or file (default: the newest shipped)")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--write-overlay", metavar="FILE", default=None,
                        help="write the rows the manifests determine, as a matrix overlay, to FILE")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = _arguments(argv)
    from imagelint.matrix.loader import load_matrix

    try:
        matrix = load_matrix(args.matrix)
        items = [read_any(Path(path)) for path in args.manifests]
        found = [d for item in items for d in _differences(item, matrix)]
        if args.write_overlay:
            rows = derived_rows(items, matrix)
            text = overlay_text(rows, _dt.date.today())
            from imagelint.matrix.loader import apply_overlay

            apply_overlay(matrix, text, args.write_overlay)  # the rows must pass the matrix's own checks
            _write_new(args.write_overlay, text)
            print(f"refresh: {sum(len(r) for r in rows.values())} derived row(s) written to {args.write_overlay}",
                  file=sys.stderr)
    except (ManifestError, ImagelintError) as exc:
        print(f"refresh: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"refresh: {args.write_overlay}: cannot write: {exc.strerror or exc}", file=sys.stderr)
        return 2
    if args.format == "json":
        print(json.dumps([asdict(d) for d in found], indent=2))
    else:
        for d in found:
            print(f"{d.manifest}: {d.kind}: {d.message}")
        if not found:
            print(f"the matrix {matrix.version} agrees with {len(args.manifests)} manifest(s)")
    return 1 if found else 0


def _differences(item: CudaManifest | DriverManifest | WheelMetadata, matrix: Matrix) -> list[Difference]:
    if isinstance(item, DriverManifest):
        return driver_differences(item, matrix)
    if isinstance(item, WheelMetadata):
        return wheel_differences(item, matrix)
    return differences(item, matrix)


if __name__ == "__main__":
    sys.exit(main())
