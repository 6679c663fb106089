"""Evidence for the CUDA runtime an image carries, and the NVIDIA_REQUIRE_* env it states.

Pure parsers (bytes/text in, versions out) first; ``cuda_facts(config, env, fs)``
puts them together with provenance. Sources, from most to least direct:
``/usr/local/cuda*/version.json`` and ``version.txt`` (reached through the
``/usr/local/cuda`` symlink when there is one), ``libcudart.so.X.Y.Z`` file
names (or, for a libcudart known only by its SONAME ``libcudart.so.12``, the
major alone: precision ``major``), pip CUDA runtime wheels (dist-info directory names), torch's
``torch/version.py``, then env and labels.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from imagelint.facts import names
from imagelint.facts.fsview import (
    FilesystemView,
    env_provenance,
    file_provenance,
    norm,
    text_lines,
)
from imagelint.facts.model import CudaFacts, CudaVersionEvidence, EnvSetting, Provenance
from imagelint.layers.model import DIRECTORY, CaptureRule
from imagelint.lazyre import lazy_pattern
from imagelint.untrusted import loads_json

CAPTURE_RULES = (
    CaptureRule("usr/local/cuda*/version.json", "content", 256 * 1024),
    CaptureRule("usr/local/cuda*/version.txt", "content", 4096),
    CaptureRule("**/cuda*/version.json", "content", 256 * 1024),
    CaptureRule("**/cuda*/version.txt", "content", 4096),
    CaptureRule("**/libcudart.so*", "record"),
    CaptureRule("**/*-packages/nvidia_cuda_runtime*.dist-info", "record"),
    CaptureRule("**/*-packages/nvidia_cuda_runtime*.dist-info/METADATA", "record"),
    CaptureRule("**/*-packages/torch/version.py", "content", 16 * 1024),
)

_VERSION = r"\d+(?:\.\d+){1,3}"
_VERSION_TXT_RE = lazy_pattern(rf"CUDA Version\s+({_VERSION})")
# Only the full X.Y.Z build name: X.Y names are SONAMEs (CUDA 11's is libcudart.so.11.0 for every 11.x).
_LIBCUDART_RE = lazy_pattern(r"^libcudart\.so\.(\d+\.\d+\.\d+)$")
_LIBCUDART_SONAME_RE = lazy_pattern(r"^libcudart\.so\.(\d{1,3})(?:\.(\d{1,3}))?$")
# nvidia_cuda_runtime_cu12-12.4.127.dist-info, nvidia_cuda_runtime-13.0.96.dist-info (CUDA 13 dropped the suffix)
_WHEEL_RE = lazy_pattern(rf"^nvidia_cuda_runtime(?:_cu(\d+))?-({_VERSION})(?:[.+][A-Za-z0-9.]*)?\.dist-info$")
# torch/version.py: cuda = '12.1'  |  cuda: Optional[str] = '12.1'  |  cuda = None
_TORCH_RE = lazy_pattern(r"""^\s*cuda\s*(?::[^=]*)?=\s*(?:'([^']*)'|"([^"]*)"|(None))\s*(?:#.*)?$""")
_CUDA_ROOT = "usr/local/cuda"


def precision_of(version: str) -> str:
    return "patch" if version.count(".") >= 2 else "minor"


# --- pure parsers ------------------------------------------------------------------------


def parse_version_json(data: bytes) -> list[tuple[str, str | None]]:
    """(version, component) from a CUDA ``version.json``: cuda_cudart first, then the toolkit ("cuda")."""
    return read_version_json(data)[0]


def read_version_json(data: bytes) -> tuple[list[tuple[str, str | None]], str | None]:
    """``parse_version_json``'s versions, and why there are none when the file holds none."""
    try:
        doc = loads_json(data.decode("utf-8", "replace"))
    except ValueError as exc:
        return [], f"not a version file imagelint can read ({exc})"
    if not isinstance(doc, dict):
        return [], "not a version file imagelint can read (not a JSON object)"
    out: list[tuple[str, str | None]] = []
    for key, component in (("cuda_cudart", "cudart"), ("cuda", None)):
        item = doc.get(key)
        version = item.get("version") if isinstance(item, dict) else None
        if isinstance(version, str) and re.fullmatch(_VERSION, version.strip()):
            out.append((version.strip(), component))
    return out, None if out else "holds no cuda_cudart or cuda version"


def parse_version_txt(data: bytes) -> str | None:
    m = _VERSION_TXT_RE.search(data.decode("utf-8", "replace"))
    return m.group(1) if m else None


def parse_libcudart_name(name: str) -> str | None:
    """``libcudart.so.12.4.127`` → ``12.4.127``; SONAMEs (``libcudart.so.12``, ``.so.11.0``) say less (None;
    see ``parse_libcudart_soname``)."""
    m = _LIBCUDART_RE.match(name)
    return m.group(1) if m else None


def parse_libcudart_soname(name: str) -> tuple[str, str] | None:
    """(version, precision) a SONAME-named libcudart establishes, as the pip wheels ship it.

    From CUDA 11 on the SONAME names the major only: ``libcudart.so.12``, ``libcudart.so.13``,
    and ``libcudart.so.11.0`` for every 11.x -> ("12", "major"). Before, it named the minor:
    ``libcudart.so.10.2`` -> ("10.2", "minor"). Anything else -> None.
    """
    m = _LIBCUDART_SONAME_RE.match(name)
    if m is None:
        return None
    major, minor = int(m.group(1)), m.group(2)
    if major >= 11:
        return (str(major), "major") if minor in (None, "0") else None
    return (f"{major}.{int(minor)}", "minor") if minor is not None else None


def parse_wheel_dist_info(name: str) -> str | None:
    """``nvidia_cuda_runtime_cu12-12.4.127.dist-info`` → ``12.4.127``."""
    m = _WHEEL_RE.match(name)
    return m.group(2) if m else None


def parse_torch_version_py(data: bytes) -> tuple[str | None, int] | None:
    """(cuda version or None for a CPU build, line) from torch/version.py; None if no ``cuda`` line."""
    for number, line in enumerate(text_lines(data), 1):
        m = _TORCH_RE.match(line)
        if m:
            value = m.group(1) if m.group(1) is not None else m.group(2)
            return (value or None, number)
    return None


# --- from the image ------------------------------------------------------------------------


def _version_files(fs: FilesystemView, name: str) -> list[tuple[str, str | None]]:
    """(resolved path, via) of every CUDA version file, the one behind /usr/local/cuda first."""
    found: dict[str, str | None] = {}
    front = fs.resolve(f"{_CUDA_ROOT}/{name}")
    if front is not None and fs.read(front) is not None:
        found[front] = f"{_CUDA_ROOT}/{name}"
    for pattern in (f"usr/local/cuda*/{name}", f"**/cuda*/{name}"):
        for entry in fs.glob(pattern):
            resolved = fs.resolve(entry.path)
            if resolved and resolved not in found:
                found[resolved] = entry.path
    return list(found.items())


def _note_unread(fs: FilesystemView, path: str, via: str | None, unread: list[tuple[str, Provenance]] | None) -> None:
    """A version file over its capture limit is a note, never a silent gap."""
    truncated = getattr(fs, "truncated", None)
    if unread is not None and truncated is not None and truncated(path):
        unread.append(("over its capture limit: not read for the CUDA version", file_provenance(fs, path, via)))


def _file_evidence(fs: FilesystemView, unread: list[tuple[str, Provenance]] | None = None,
                   warnings: list[str] | None = None) -> list[CudaVersionEvidence]:
    out: list[CudaVersionEvidence] = []
    version: str | None  # what each source says; None: nothing
    resolved: str | None  # a file's path with its links followed; None: they lead nowhere
    for resolved, via in _version_files(fs, "version.json"):
        data = fs.read(resolved)
        if data is None:
            _note_unread(fs, resolved, via, unread)
            continue
        prov = file_provenance(fs, resolved, via)
        versions, problem = read_version_json(data)
        if problem is not None and warnings is not None:  # said, never a silent gap in the evidence
            warnings.append(f"/{resolved}: {problem}; the CUDA version is taken from the image's other evidence")
        for version, component in versions:
            precision = "minor" if component else precision_of(version)
            out.append(CudaVersionEvidence(version, "version.json", prov, precision, component))
    for resolved, via in _version_files(fs, "version.txt"):
        data = fs.read(resolved)
        if data is None:
            _note_unread(fs, resolved, via, unread)
        version = parse_version_txt(data) if data is not None else None
        if version:
            out.append(CudaVersionEvidence(version, "version.txt", file_provenance(fs, resolved, via), precision_of(version)))
    seen: set[str] = set()
    libcudarts = fs.glob("**/libcudart.so*")
    for entry in libcudarts:
        version = parse_libcudart_name(entry.path.rsplit("/", 1)[-1])
        resolved = fs.resolve(entry.path)
        if version is None or resolved is None or resolved in seen:
            continue
        seen.add(resolved)
        prov = file_provenance(fs, entry.path)
        out.append(CudaVersionEvidence(version, "libcudart", prov, "minor", "cudart"))
    # A libcudart known only by its SONAME (pip wheels ship libcudart.so.12; images copy it
    # into /usr/local/cuda/lib64) still says which major the runtime is: evidence with
    # precision "major" -- unless the file it resolves to also has a full name above.
    for entry in libcudarts:
        soname = parse_libcudart_soname(entry.path.rsplit("/", 1)[-1])
        resolved = fs.resolve(entry.path)
        if soname is None or resolved is None or resolved in seen:
            continue
        seen.add(resolved)
        version, precision = soname
        out.append(CudaVersionEvidence(version, "libcudart", file_provenance(fs, entry.path, entry.path), precision,
                                       "cudart"))
    wheels: set[str] = set()
    for entry in fs.glob("**/*-packages/nvidia_cuda_runtime*.dist-info") + fs.glob(
        "**/*-packages/nvidia_cuda_runtime*.dist-info/METADATA"
    ):
        path = entry.path if entry.kind == DIRECTORY or not entry.path.endswith("/METADATA") else entry.path.rsplit("/", 1)[0]
        version = parse_wheel_dist_info(path.rsplit("/", 1)[-1])
        if version is None or path in wheels:
            continue
        wheels.add(path)
        out.append(CudaVersionEvidence(version, "pip-wheel", file_provenance(fs, path), "minor", "cudart"))
    for entry in fs.glob("**/*-packages/torch/version.py"):
        data = fs.read(entry.path)
        if data is None:
            _note_unread(fs, entry.path, None, unread)
        parsed = parse_torch_version_py(data) if data is not None else None
        if parsed and parsed[0]:
            out.append(CudaVersionEvidence(parsed[0], "torch", file_provenance(fs, entry.path, line=parsed[1]), "minor", "torch"))
    return out


def _env_evidence(env: Iterable[EnvSetting], labels: dict[str, str]) -> list[CudaVersionEvidence]:
    out: list[CudaVersionEvidence] = []
    for e in env:
        value = e.value.strip()
        if e.name == names.CUDA_VERSION and value:
            # Recorded as given: NGC's 4-part 12.2.2.009 is itself a fact rules care about.
            out.append(CudaVersionEvidence(value, "env", e.provenance, precision_of(value)))
        elif e.name in names.CUDART_PACKAGE_ENV and value:
            version = value.split("-", 1)[0]  # Debian revision "-1" is not part of the version
            out.append(CudaVersionEvidence(version, "env", e.provenance, "minor", "cudart"))
        elif e.name in names.NGC_DRIVER_ENV and value:
            out.append(CudaVersionEvidence(value, "ngc-env", e.provenance, precision_of(value), "driver"))
        elif (
            e.name.startswith(names.NGC_RELEASE_ENV_PREFIX)
            and e.name.endswith(names.NGC_RELEASE_ENV_SUFFIX)
            and not e.name.startswith(names.REQUIRE_PREFIX)
            and value
        ):
            product = e.name[len(names.NGC_RELEASE_ENV_PREFIX) : -len(names.NGC_RELEASE_ENV_SUFFIX)].lower()
            out.append(CudaVersionEvidence(value, "ngc-env", e.provenance, precision_of(value), f"ngc-{product}"))
    for key in names.CUDA_VERSION_LABELS:
        value = labels.get(key, "").strip()
        if value:
            out.append(CudaVersionEvidence(value, "label", Provenance(kind="label", key=key), precision_of(value)))
    return out


def cuda_facts(env: tuple[EnvSetting, ...], labels: dict[str, str], fs: FilesystemView | None,
               unread: list[tuple[str, Provenance]] | None = None, warnings: list[str] | None = None) -> CudaFacts:
    """All CUDA evidence and the runtime's requirement env. ``fs`` None = config only. Version files
    over their capture limit are added to ``unread`` (note, file); a ``version.json`` that holds
    no version imagelint can read is a line in ``warnings``."""
    versions = (_file_evidence(fs, unread, warnings) if fs is not None else []) + _env_evidence(env, labels)
    by_name = {e.name: e for e in env}
    requires = tuple(e for e in env if e.name.startswith(names.REQUIRE_PREFIX))
    return CudaFacts(
        versions=tuple(versions),
        requires=requires,
        cuda_version_env=by_name.get(names.CUDA_VERSION),
        disable_require=by_name.get(names.DISABLE_REQUIRE),
        disable_requires_plural=by_name.get(names.DISABLE_REQUIRES_PLURAL),
    )


__all__ = [
    "CAPTURE_RULES",
    "cuda_facts",
    "parse_version_json",
    "parse_version_txt",
    "parse_libcudart_name",
    "parse_wheel_dist_info",
    "parse_torch_version_py",
    "norm",
    "env_provenance",
]
