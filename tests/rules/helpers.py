"""Small builders for ImageFacts in rule tests (facts built directly where the image path adds nothing)."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from types import MappingProxyType

from imagelint.core.config import Config
from imagelint.core.engine import ImageResult, run_rules
from imagelint.facts.model import (
    CudaFacts,
    CudaVersionEvidence,
    DriverLibrary,
    EnvSetting,
    ForwardCompatNote,
    GpuFacts,
    GpuIndexSetting,
    ImageFacts,
    LoaderFacts,
    LoaderPathEntry,
    Provenance,
)
from imagelint.image import Platform
from imagelint.deploytarget import GpuSpec, NodePool, Target

REFERENCE = Path(__file__).resolve().parents[2].parent / "shared" / "reference"


def env_prov(name: str) -> Provenance:
    return Provenance("env", key=name)


def file_prov(path: str, layer: int = 1, line: int | None = None, via: str | None = None) -> Provenance:
    return Provenance("file", path=path, via=via, layer_index=layer, layer_digest="sha256:" + "ab" * 32, line=line)


def setting(name: str, value: str) -> EnvSetting:
    return EnvSetting(name, value, env_prov(name))


def cuda_facts(env: dict[str, str], versions: tuple[CudaVersionEvidence, ...] | None = None) -> CudaFacts:
    """CudaFacts as the facts layer derives them from an env (plus explicit file evidence)."""
    evidence = list(versions or ())
    if "CUDA_VERSION" in env and env["CUDA_VERSION"]:
        evidence.append(CudaVersionEvidence(env["CUDA_VERSION"], "env", env_prov("CUDA_VERSION"), "patch"))
    return CudaFacts(
        versions=tuple(evidence),
        requires=tuple(setting(k, v) for k, v in env.items() if k.startswith("NVIDIA_REQUIRE_")),
        cuda_version_env=setting("CUDA_VERSION", env["CUDA_VERSION"]) if "CUDA_VERSION" in env else None,
        disable_require=setting("NVIDIA_DISABLE_REQUIRE", env["NVIDIA_DISABLE_REQUIRE"]) if "NVIDIA_DISABLE_REQUIRE" in env else None,
        disable_requires_plural=setting("NVIDIA_DISABLE_REQUIRES", env["NVIDIA_DISABLE_REQUIRES"]) if "NVIDIA_DISABLE_REQUIRES" in env else None,
    )


def facts(
    env: dict[str, str] | None = None,
    *,
    versions: tuple[CudaVersionEvidence, ...] | None = None,
    driver_libraries: tuple[DriverLibrary, ...] = (),
    loader: LoaderFacts | None = None,
    index_settings: tuple[GpuIndexSetting, ...] = (),
    needs_capabilities: tuple[tuple[str, Provenance], ...] = (),
    platforms: tuple[Platform, ...] = (Platform("linux", "amd64"),),
    labels: dict[str, str] | None = None,
    kind: str = "image",
    subject: str = "example/app:1",
    complete: bool = True,
) -> ImageFacts:
    env = dict(env or {})
    gpu = GpuFacts(
        visible_devices=setting("NVIDIA_VISIBLE_DEVICES", env["NVIDIA_VISIBLE_DEVICES"]) if "NVIDIA_VISIBLE_DEVICES" in env else None,
        cuda_visible_devices=setting("CUDA_VISIBLE_DEVICES", env["CUDA_VISIBLE_DEVICES"]) if "CUDA_VISIBLE_DEVICES" in env else None,
        driver_capabilities=setting("NVIDIA_DRIVER_CAPABILITIES", env["NVIDIA_DRIVER_CAPABILITIES"]) if "NVIDIA_DRIVER_CAPABILITIES" in env else None,
        index_settings=index_settings,
        needs_capabilities=needs_capabilities,
    )
    if loader is None:
        ld = [
            LoaderPathEntry(d, "LD_LIBRARY_PATH", env_prov("LD_LIBRARY_PATH"))
            for d in env.get("LD_LIBRARY_PATH", "").split(":") if d
        ]
        loader = LoaderFacts(ld_library_path=tuple(ld))
    return ImageFacts(
        subject=subject,
        kind=kind,
        platform=platforms[0] if platforms and kind == "image" else None,
        platforms=platforms if kind == "image" else (),
        digest="sha256:" + "cd" * 32 if kind == "image" else None,
        env=tuple(setting(k, v) for k, v in env.items()),
        labels=MappingProxyType(dict(labels or {})),
        cuda=cuda_facts(env, versions),
        driver_libraries=driver_libraries,
        loader=loader,
        gpu=gpu,
        complete=complete,
    )


def pool(name: str = "p", driver: str | None = "535.104.05", gpus: tuple[str, ...] = ("T4",), **kw) -> NodePool:
    return NodePool(name, driver=driver, gpus=tuple(GpuSpec(product=g) for g in gpus), **kw)


def target(*pools: NodePool) -> Target:
    return Target(pools=pools, source="flags")


@functools.lru_cache(maxsize=1)
def matrix():
    """The real shipped matrix (loaded once per test session)."""
    from imagelint.matrix import load_matrix

    return load_matrix()


def run(f: ImageFacts, t: Target | None = None, matrix=None, config: Config | None = None, select: str | None = None) -> ImageResult:
    cfg = config or Config(select=(select,) if select else ())
    result = run_rules(f, t or Target(), matrix if matrix is not None else globals()["matrix"](), cfg)
    assert not [n for n in result.notices if "failed" in n], result.notices
    return result


def of(result: ImageResult, rule: str):
    return [f for f in result.findings if f.rule == rule]


def official_env(version: str, arch: str = "amd64") -> dict[str, str]:
    """The env of the official nvidia/cuda image (base) for a version, from the reference data."""
    data = json.loads((REFERENCE / "cuda-image-env.json").read_text())
    entry = next(e for e in data["entries"] if e["cuda_image_version"] == version)
    env = dict(entry["common_env"])
    env.update(entry[arch])
    env.pop("PATH", None)
    return env


def compat_lib(version: str = "550.54.15", cuda: str = "12.4", branches: tuple[int, ...] = (470, 525, 535)) -> DriverLibrary:
    return DriverLibrary(
        name=f"libcuda.so.{version}",
        path=f"usr/local/cuda-{cuda}/compat/libcuda.so.{version}",
        role="compat",
        version=version,
        on_loader_path=False,
        provenance=file_prov(f"usr/local/cuda-{cuda}/compat/libcuda.so.{version}"),
        fwd_compat=ForwardCompatNote(cuda, branches, (1, 2), "{}"),
    )
