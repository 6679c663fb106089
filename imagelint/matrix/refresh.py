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

Exit status: 0 nothing differs, 1 something differs, 2 a manifest or the matrix could not be read.
Nothing is changed: the report is for a human, who edits the matrix with a source on each row.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from imagelint.errors import ImagelintError
from imagelint.lazyre import lazy_pattern
from imagelint.matrix.model import Matrix
from imagelint.matrix.versions import compare_versions, is_numeric_version, major_minor
from imagelint.untrusted import loads_json
from imagelint.localfile import read_regular_file

MAX_MANIFEST_BYTES = 16 * 1024 * 1024  # real manifests are ~50 KiB
_DATE = lazy_pattern(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


class ManifestError(ValueError):
    """A file that is not a readable redistributable manifest; the message is one line."""


@dataclass(frozen=True)
class Manifest:
    """What the refresh compares: the release and the versions of the components it reads."""

    path: str
    release: str
    date: str | None
    cudart: str | None
    nvcc: str | None
    driver: str | None  # the bundled nvidia_driver, None from CUDA 13.4 on


@dataclass(frozen=True)
class Difference:
    manifest: str
    release: str
    kind: str
    message: str


def read_manifest(path: Path) -> Manifest:
    """Parse one ``redistrib_X.Y.Z.json``. Raises ``ManifestError`` on anything else."""
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
    product = doc.get("release_product")
    if product is not None and product != "cuda":
        raise ManifestError(f"{path}: a {_shown(product)} manifest, not the CUDA toolkit's")
    release = doc.get("release_label")
    if not isinstance(release, str) or not is_numeric_version(release) or release.count(".") != 2:
        raise ManifestError(f"{path}: not a redistrib manifest (release_label {_shown(release)} is not X.Y.Z)")
    date = doc.get("release_date")
    return Manifest(str(path), release, date if isinstance(date, str) and _DATE.fullmatch(date) else None,
                    _component_version(doc, "cuda_cudart"), _component_version(doc, "cuda_nvcc"),
                    _component_version(doc, "nvidia_driver"))


def _component_version(doc: Mapping[str, Any], name: str) -> str | None:
    component = doc.get(name)
    version = component.get("version") if isinstance(component, dict) else None
    return version if isinstance(version, str) and is_numeric_version(version) else None


def _shown(value: Any) -> str:
    """A value from an untrusted file, short and printable."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def differences(manifest: Manifest, matrix: Matrix) -> list[Difference]:
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
    mm = major_minor(manifest.release)
    if not any(major_minor(r["max_cuda"]) == mm for r in matrix.rows("driver_branches")):
        say("no-driver-branch", f"CUDA {mm}: no driver_branches row reports it (which branch ships with it?)")
    return out


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python3 -m imagelint.matrix.refresh",
        description="Report matrix rows that differ from NVIDIA's CUDA redistributable manifests (redistrib_X.Y.Z.json).")
    parser.add_argument("manifests", nargs="+", metavar="MANIFEST.json")
    parser.add_argument("--matrix", default=None, help="a matrix version or file (default: the newest shipped)")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = _arguments(argv)
    from imagelint.matrix.loader import load_matrix

    try:
        matrix = load_matrix(args.matrix)
        found = [d for path in args.manifests for d in differences(read_manifest(Path(path)), matrix)]
    except (ManifestError, ImagelintError) as exc:
        print(f"refresh: {exc}", file=sys.stderr)
        return 2
    if args.format == "json":
        print(json.dumps([asdict(d) for d in found], indent=2))
    else:
        for d in found:
            print(f"{d.manifest}: {d.kind}: {d.message}")
        if not found:
            print(f"the matrix {matrix.version} agrees with {len(args.manifests)} manifest(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
