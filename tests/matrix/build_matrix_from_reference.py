"""Rebuild matrices/<date>.toml from the research data in ../shared/reference/ (a maintainer tool).

Not a test. Run: python3 tests/matrix/build_matrix_from_reference.py 2026-11-29 > matrices/2026-11-29.toml
Judgement calls (what is uncertain, what stays out) are written here, next to the data they affect.

The shipped file has since been edited by hand where the reference data was behind (sources
re-checked): issue 12 added driver_gpu_support, driver_lifecycle through R620 with eol_date,
branch R620, the toolkit compat rows (cuda-compat-hook since 1.17.5, compat-libs-from-container-off
1.17.4) and CVE notes on toolkit releases. Issue 13 added, at the end of the file, ngc_releases,
DeepStream ngc_images rows, image_cuda_tags, dra_device_classes and dra_driver_releases. Re-running this script drops those rows: merge them back.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from imagelint.matrix.tomlout import dump_matrix

REF = Path(__file__).resolve().parents[3] / "shared" / "reference"
RELNOTES = "https://docs.nvidia.com/cuda/archive/13.2.2/cuda-toolkit-release-notes/index.html (Table 3 'CUDA Toolkit and Corresponding Driver Versions')"
FWD = "https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html"
CUDA_GPUS = "https://developer.nvidia.com/cuda-gpus (rows 8.6-12.1 checked 2026-11-29; V100 on https://developer.nvidia.com/cuda-legacy-gpus; T4/A100/A30 from the team's compute-capability.json)"
GFD_FAMILY = "NVIDIA/k8s-device-plugin internal/lm/resource.go getArchFamily"
LNC_BRAND = "NVML nvmlBrandType_t; libnvidia-container brand strings (nvidia-facts.md 1.3)"


def load(name: str) -> dict:
    return json.loads((REF / name).read_text())


def cuda_releases() -> list[dict]:
    rows = []
    for r in load("cuda-driver-table.json")["toolkit_releases"]:
        driver = r["min_linux_x86_64_driver"]
        if not re.fullmatch(r"[0-9.]+", driver):
            continue  # CUDA 13.4: no agreed minimum driver (sources disagree) -> stays out
        label = r["label"]
        version = r["toolkit_version"]
        if version == "10.1":
            version = "10.1.105"
        kind = "rc" if "RC" in label else ("update" if "Update" in label else "ga")
        row = {"version": version, "label": label, "release_kind": kind, "min_driver": driver}
        win = r.get("min_windows_driver")
        if win and re.fullmatch(r"[0-9.]+", win):
            row["min_driver_windows"] = win
        row["source"] = r["source"] if r.get("uncertain") else RELNOTES
        if r.get("uncertain"):
            row["confidence"] = "uncertain"
            row["note"] = "not in the primary release-notes copy we could read; secondary sources only"
        if version == "10.1.105":
            row["note"] = "Table 3 lists 10.1 (10.1.105 general release, and updates) as one row"
        rows.append(row)
    return rows


def minor_version_compat() -> list[dict]:
    src = load("cuda-driver-table.json")["minor_version_compatibility"]["source"]
    return [
        {"cuda_major": 13, "min_driver": "580", "source": src, "note": "Table 2 gives >=580 without a patch-level minimum"},
        {"cuda_major": 12, "min_driver": "525.60.13", "below_branch": 580, "source": src},
        {"cuda_major": 11, "min_driver": "450.80.02", "below_branch": 525, "source": src},
    ]


def driver_branches() -> list[dict]:
    rows = []
    for r in load("cuda-driver-table.json")["driver_branch_max_cuda"]:
        row = {"branch": r["branch"], "max_cuda": r["max_cuda"], "source": r["source"]}
        if r.get("uncertain"):
            row["confidence"] = "uncertain"
        rows.append(row)
    return rows


def lifecycle() -> list[dict]:
    d = load("cuda-driver-table.json")["datacenter_driver_lifecycle"]
    return [
        {"branch": int(b["branch"].lstrip("R")), "designation": b["designation"], "eol": b["eol"], "source": d["source"]}
        for b in d["branches"]
    ]


def forward_compat() -> list[dict]:
    d = load("cuda-driver-table.json")["forward_compatibility"]
    columns = [int(c.split("+")[0]) for c in d["host_driver_columns"]]
    rows = []
    for package, cells in d["matrix"].items():
        major, minor = package.rsplit("-", 2)[-2:]
        row = {
            "package": package,
            "cuda": f"{major}.{minor}",
            "compatible_branches": [b for b, c in zip(columns, cells) if c == "C"],
            "not_needed_branches": [b for b, c in zip(columns, cells) if c == "N/A"],
            "incompatible_branches": [b for b, c in zip(columns, cells) if c == "X"],
            "eligible_kinds": ["datacenter", "rtx-server-ready", "jetson"],
            "source": FWD,
        }
        if package in ("cuda-compat-13-3", "cuda-compat-13-4"):
            row["confidence"] = "uncertain"
            row["note"] = "host branches 610/615 and their CUDA versions are not confirmed elsewhere"
        rows.append(row)
    return rows


NVML_BRANDS = [
    ("Unknown", 0, False), ("Quadro", 1, True), ("Tesla", 2, True), ("NVS", 3, False), ("GRID", 4, False),
    ("GeForce", 5, False), ("Titan", 6, False), ("vApps", 7, True), ("vPC", 8, True), ("vCS", 9, True),
    ("vWS", 10, True), ("CloudGaming", 11, True), ("QuadroRTX", 12, True), ("NvidiaRTX", 13, True),
    ("Nvidia", 14, True), ("GeForceRTX", 15, False), ("TitanRTX", 16, False),
]


def forward_compat_brands() -> list[dict]:
    return [
        {
            "brand": name, "nvml_brand_id": ident, "eligible": eligible, "confidence": "uncertain",
            "source": "inference from the cuda-compat ELF note Device list [1,2,7..14] (NVIDIA/nvidia-container-toolkit cmd/nvidia-cdi-hook/cudacompat testdata) read as NVML brand ids",
        }
        for name, ident, eligible in NVML_BRANDS
    ]


def gpu(name, aliases, cc, family, brand, kind, note=None, uncertain=False):
    row = {
        "name": name, "aliases": aliases, "compute_capability": cc, "family": family, "brand": brand,
        "brand_confidence": "uncertain", "kind": kind, "datacenter": kind == "datacenter",
        "source": f"{CUDA_GPUS}; family: {GFD_FAMILY}; brand: {LNC_BRAND} (UNCERTAIN for this product)",
    }
    if uncertain:
        row["confidence"] = "uncertain"
    if note:
        row["note"] = note
    return row


def gpus() -> list[dict]:
    return [
        gpu("Tesla V100", ["V100", "NVIDIA V100", "Tesla-V100", "Tesla-V100-SXM2-16GB", "Tesla-V100-SXM2-32GB", "Tesla-V100-PCIE-16GB", "Tesla-V100-PCIE-32GB"], "7.0", "volta", "Tesla", "datacenter"),
        gpu("Tesla T4", ["T4", "NVIDIA T4", "Tesla-T4"], "7.5", "turing", "Tesla", "datacenter"),
        gpu("NVIDIA A100", ["A100", "A100-SXM4-40GB", "A100-SXM4-80GB", "A100-PCIE-40GB", "A100-PCIE-80GB", "NVIDIA-A100-SXM4-40GB", "NVIDIA-A100-SXM4-80GB", "NVIDIA-A100-PCIE-40GB", "NVIDIA-A100-80GB-PCIe"], "8.0", "ampere", "Nvidia", "datacenter"),
        gpu("NVIDIA A30", ["A30", "NVIDIA-A30"], "8.0", "ampere", "Nvidia", "datacenter"),
        gpu("NVIDIA A10", ["A10", "NVIDIA-A10"], "8.6", "ampere", "Nvidia", "datacenter"),
        gpu("NVIDIA A10G", ["A10G", "NVIDIA-A10G"], "8.6", "ampere", "Nvidia", "datacenter", note="AWS part; listed with A10 in compute-capability.json"),
        gpu("NVIDIA A40", ["A40", "NVIDIA-A40"], "8.6", "ampere", "Nvidia", "datacenter"),
        gpu("NVIDIA A16", ["A16", "NVIDIA-A16"], "8.6", "ampere", "Nvidia", "datacenter"),
        gpu("NVIDIA A2", ["A2", "NVIDIA-A2"], "8.6", "ampere", "Nvidia", "datacenter"),
        gpu("NVIDIA RTX A6000", ["RTX A6000", "RTX-A6000", "NVIDIA-RTX-A6000"], "8.6", "ampere", "NvidiaRTX", "workstation"),
        gpu("NVIDIA GeForce RTX 3080", ["RTX 3080", "GeForce RTX 3080", "NVIDIA-GeForce-RTX-3080"], "8.6", "ampere", "GeForce", "geforce"),
        gpu("NVIDIA GeForce RTX 3090", ["RTX 3090", "GeForce RTX 3090", "NVIDIA-GeForce-RTX-3090"], "8.6", "ampere", "GeForce", "geforce"),
        gpu("Jetson AGX Orin", ["Orin", "Jetson Orin", "Jetson Orin NX", "Jetson Orin Nano"], "8.7", "ampere", "Unknown", "jetson", note="Tegra: csv mode, no NVML brand"),
        gpu("NVIDIA L4", ["L4", "NVIDIA-L4"], "8.9", "ada-lovelace", "Nvidia", "datacenter"),
        gpu("NVIDIA L40", ["L40", "NVIDIA-L40"], "8.9", "ada-lovelace", "Nvidia", "datacenter"),
        gpu("NVIDIA L40S", ["L40S", "NVIDIA-L40S"], "8.9", "ada-lovelace", "Nvidia", "datacenter"),
        gpu("NVIDIA RTX 6000 Ada Generation", ["RTX 6000 Ada", "NVIDIA-RTX-6000-Ada-Generation"], "8.9", "ada-lovelace", "NvidiaRTX", "workstation"),
        gpu("NVIDIA GeForce RTX 4090", ["RTX 4090", "GeForce RTX 4090", "NVIDIA-GeForce-RTX-4090"], "8.9", "ada-lovelace", "GeForce", "geforce"),
        gpu("NVIDIA H100", ["H100", "H100-SXM5-80GB", "NVIDIA-H100-80GB-HBM3", "H100-PCIe", "NVIDIA-H100-PCIe", "H100-NVL", "NVIDIA-H100-NVL"], "9.0", "hopper", "Nvidia", "datacenter"),
        gpu("NVIDIA H200", ["H200", "NVIDIA-H200", "NVIDIA-H200-141GB-HBM3e"], "9.0", "hopper", "Nvidia", "datacenter"),
        gpu("NVIDIA GH200", ["GH200", "NVIDIA-GH200-480GB"], "9.0", "hopper", "Nvidia", "datacenter"),
        gpu("NVIDIA B200", ["B200", "NVIDIA-B200"], "10.0", "blackwell", "Nvidia", "datacenter"),
        gpu("NVIDIA GB200", ["GB200", "NVIDIA-GB200"], "10.0", "blackwell", "Nvidia", "datacenter"),
        gpu("NVIDIA B300", ["B300", "NVIDIA-B300"], "10.3", "blackwell", "Nvidia", "datacenter"),
        gpu("NVIDIA GB300", ["GB300", "NVIDIA-GB300"], "10.3", "blackwell", "Nvidia", "datacenter"),
        gpu("Jetson T5000", ["Jetson Thor", "Thor", "Jetson T4000"], "11.0", "undefined", "Unknown", "jetson", note="CC 11.0 (renumbered from 10.1 in CUDA 13.0); GFD has no family for 11 -> 'undefined'"),
        gpu("NVIDIA RTX PRO 6000 Blackwell Server Edition", ["RTX PRO 6000 Blackwell Server Edition", "NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition"], "12.0", "blackwell", "NvidiaRTX", "datacenter"),
        gpu("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", ["RTX PRO 6000 Blackwell", "NVIDIA-RTX-PRO-6000-Blackwell-Workstation-Edition"], "12.0", "blackwell", "NvidiaRTX", "workstation"),
        gpu("NVIDIA GeForce RTX 5090", ["RTX 5090", "GeForce RTX 5090", "NVIDIA-GeForce-RTX-5090"], "12.0", "blackwell", "GeForce", "geforce"),
        gpu("NVIDIA GB10", ["GB10", "DGX Spark", "NVIDIA-GB10"], "12.1", "blackwell", "Nvidia", "workstation"),
    ]


def _features(rows: list[tuple]) -> list[dict]:
    out = []
    for name, since, description, source, *extra in rows:
        row = {"name": name, "since": since, "description": description}
        if extra:
            row["default_runtime_mode"] = extra[0]
        row["source"] = source
        out.append(row)
    return out


def toolkit() -> tuple[list[dict], list[dict]]:
    d = load("toolkit-releases.json")
    releases = []
    for r in d["releases"]:
        row = {"version": r["version"].lstrip("v"), "date": r["date"]}
        if r.get("notable"):
            row["notable"] = r["notable"]
        row["source"] = "NVIDIA/nvidia-container-toolkit git tag " + r["version"] + " (" + r["date_source"] + ")"
        releases.append(row)
    cl = "NVIDIA/nvidia-container-toolkit CHANGELOG.md"
    features = _features([
        ("legacy-runtime-default", "1.0.0", "nvidia-container-runtime in mode=auto uses the legacy hook path (libnvidia-container enforces NVIDIA_REQUIRE_*)", cl, "legacy"),
        ("nvml-brand-names", "1.9.0", "libnvidia-container knows the newer NVML brands (brand=nvidia, nvidiartx, quadrortx ...); older versions report them as Unknown", cl + " v1.9.0; NVIDIA/nvidia-container-toolkit#24"),
        ("csv-require-checks", "1.10.0", "NVIDIA_REQUIRE_* cuda/arch checks in csv (Tegra) mode; NVIDIA_REQUIRE_JETPACK* ignored", cl + " v1.10.0-rc.2/rc.3"),
        ("cdi-generate", "1.12.0", "nvidia-ctk cdi generate (CDI specs for the GPUs)", cl + " v1.12.0"),
        ("envvar-unprivileged-in-cdi", "1.13.0", "accept-nvidia-visible-devices-envvar-when-unprivileged honoured in CDI mode (default still true)", cl + " v1.13.0"),
        ("docker-enable-cdi", "1.15.0", "nvidia-ctk runtime configure --enable-cdi for Docker (needs Docker >= 25)", cl + " v1.15.0"),
        ("jit-cdi-default", "1.18.0", "nvidia-container-runtime mode=auto resolves to jit-cdi on NVML/WSL hosts: NVIDIA_REQUIRE_* is no longer enforced", cl + " v1.18.0-rc.1 'Default to jit-cdi mode in the nvidia runtime'; internal/info/auto.go", "jit-cdi"),
        ("cuda-compat-hook", "1.18.0", "enable-cuda-compat hook and legacy cuda-compat-mode (ldconfig|mount|disabled|hook)", cl + " v1.18.0"),
        ("compat-elf-note-check", "1.19.0", "the compat hook reads the .note.cuda.fwd_compatibility ELF note (host branch must be listed)", cl + " v1.19.0; cmd/nvidia-cdi-hook/cudacompat"),
    ])
    return releases, features


def device_plugin() -> tuple[list[dict], list[dict], list[dict]]:
    d = load("device-plugin-releases.json")
    releases = []
    for r in d["releases"]:
        row = {"version": r["version"].lstrip("v"), "date": r["date"]}
        if r.get("notable"):
            row["notable"] = r["notable"]
        row["source"] = "NVIDIA/k8s-device-plugin git tag " + r["version"] + " (" + r["date_source"] + ")"
        releases.append(row)
    cl = "NVIDIA/k8s-device-plugin CHANGELOG.md"
    features = [
        {"name": "strategy-envvar", "since": "0.6.0", "description": "deviceListStrategy=envvar (NVIDIA_VISIBLE_DEVICES; default)", "source": "NVIDIA/k8s-device-plugin README.md"},
        {"name": "mig-strategies", "since": "0.7.0", "description": "MIG strategies none|single|mixed", "source": cl + " v0.7.0"},
        {"name": "config-file", "since": "0.12.0", "description": "config file version v1, time-slicing sharing, renameByDefault", "source": cl + " v0.12.0"},
        {"name": "strategy-cdi-annotations", "since": "0.14.0", "description": "deviceListStrategy=cdi-annotations (requirements not checked by the runtime)", "source": cl + " v0.14.0"},
        {"name": "strategy-cdi-cri", "since": "0.15.0", "description": "deviceListStrategy=cdi-cri", "source": cl + " v0.15.0"},
        {"name": "sharing-mps", "since": "0.15.0", "description": "MPS sharing", "source": cl + " v0.15.0"},
        {"name": "gfd-bundled", "since": "0.15.0", "description": "GPU Feature Discovery ships in the same repo and image", "source": cl + " v0.15.0"},
        {"name": "allocation-policy", "since": "0.20.0", "description": "sharedDevicesAllocationPolicy distributed|packed", "source": cl + " v0.20.0"},
    ]
    req = d["requirements"]  # resource naming has its own table: device_plugin_resource_names
    requirements = [
        {"name": "min_driver", "value": "384.81", "source": req["source"], "note": req["driver"]},
        {"name": "min_toolkit", "value": "1.7.0", "source": req["source"], "note": req["toolkit"]},
        {"name": "min_toolkit_tegra", "value": "1.11.0", "source": req["source"]},
        {"name": "min_kubernetes", "value": "1.10", "source": req["source"], "note": req["kubernetes"]},
        {"name": "default_runtime", "value": "nvidia", "source": req["source"], "note": req["runtime"]},
        {"name": "default_device_list_strategy", "value": "envvar", "source": "NVIDIA/k8s-device-plugin api/config/v1/flags.go"},
        {"name": "toolkit_accept_envvar_unprivileged_default", "value": "true", "source": "NVIDIA/nvidia-container-toolkit api/config/v1/config.go GetDefault"},
        {"name": "toolkit_accept_volume_mounts_default", "value": "false", "source": "NVIDIA/nvidia-container-toolkit api/config/v1/config.go GetDefault"},
    ]
    return releases, features, requirements


def gpu_operator() -> list[dict]:
    d = load("gpu-operator-matrix.json")
    rows = []
    for r in d["releases"]:
        drivers, default, recommended = [], None, []
        for cell in r["drivers"]:
            version = cell.split(" ", 1)[0]
            drivers.append(version)
            if "(default)" in cell:
                default = version
            if "(recommended)" in cell:
                recommended.append(version)
        toolkit = r["container_toolkit"].split(" ", 1)[0]
        row = {"version": r["gpu_operator"].lstrip("v"), "drivers": drivers}
        if default:
            row["default_driver"] = default
        if recommended:
            row["recommended_drivers"] = recommended
        row.update({"container_toolkit": toolkit, "device_plugin": r["device_plugin"]})
        for key in ("gfd", "dcgm", "dcgm_exporter", "nfd", "mig_manager", "driver_manager"):
            if r.get(key):
                row[key] = r[key]
        row["source"] = r["source"]
        if "uncertain" in r["container_toolkit"]:
            row["confidence"] = "uncertain"
            row["note"] = r["container_toolkit"]
        rows.append(row)
    return rows


def ngc() -> list[dict]:
    d = load("ngc-containers.json")
    rows = []
    for r in d["pytorch"]:
        repo, tag = r["image"].rsplit(":", 1)
        row = {"repository": repo, "tag": tag, "release": r["release"], "cuda": r["cuda"], "framework_version": r["pytorch"]}
        if r.get("min_driver_branch_without_compat"):
            row["min_driver_branch"] = int(r["min_driver_branch_without_compat"])
        row["source"] = r["source"]
        if not r.get("verified"):
            row["confidence"] = "uncertain"
        rows.append(row)
    return rows


# --- official CUDA image env (cuda-image-env.json) -------------------------------------------------
CUDA_IMG = "gitlab.com/nvidia/container-images/cuda"
# Env we carry per image: what the runtime and the rules read. PATH is left out (the Dockerfiles
# write "...:${PATH}", whose value depends on the OS image underneath).
IMAGE_ENV_KEYS = (
    "NVIDIA_REQUIRE_CUDA", "CUDA_VERSION", "NV_CUDA_CUDART_VERSION", "NV_CUDA_COMPAT_PACKAGE",
    "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES", "LD_LIBRARY_PATH",
)


def _image_env(entry: dict, arch_env: dict) -> list[str]:
    merged = {**entry["common_env"], **arch_env}
    if entry["flavor"] == "derived image env":
        # 13.0.2 comes from a vLLM image built FROM nvidia/cuda: its LD_LIBRARY_PATH is the
        # derived image's (duplicated entries), not the base image's -> left out.
        merged.pop("LD_LIBRARY_PATH", None)
    return [f"{k}={merged[k]}" for k in IMAGE_ENV_KEYS if k in merged]


def _image_row_meta(entry: dict) -> tuple[str | None, str | None]:
    """(confidence, note): only verbatim copies of NVIDIA's own dist/ Dockerfiles are documented."""
    if entry.get("reconstructed_from_pattern") or not entry.get("verbatim"):
        return "uncertain", "reconstructed from secondary copies of the image config (not verbatim)"
    if "FMCL-Docker" not in entry["source"]:
        note = entry.get("notes") or "verbatim, but copied from a third-party file rather than NVIDIA's dist/"
        return "uncertain", f"secondary copy: {note}"
    return None, None


def cuda_image_env() -> list[dict]:
    rows = []
    for e in load("cuda-image-env.json")["entries"]:
        confidence, note = _image_row_meta(e)
        amd64 = _image_env(e, e["amd64"])
        arm64 = _image_env(e, e["arm64"]) if e["arm64"] else None
        arches = [("any", amd64)] if arm64 == amd64 else [("amd64", amd64)] + ([("arm64", arm64)] if arm64 else [])
        for arch, env in arches:
            row = {"version": e["cuda_image_version"], "arch": arch, "flavor": "base", "os": e["os"], "env": env,
                   "source": e["source"]}
            if confidence:
                row["confidence"] = confidence
            notes = [note] if note else []
            if arch == "arm64" and "NVIDIA_REQUIRE_CUDA" not in e["arm64"]:
                notes.append("the arm64 stage of this snapshot sets no NVIDIA_REQUIRE_CUDA")
            if notes:
                row["note"] = "; ".join(notes)
            rows.append(row)
    return rows


def cuda_image_flavors() -> list[dict]:
    # dist/<ver>/<os>/runtime/Dockerfile starts FROM the base tag, devel FROM runtime, and the cudnn
    # variants (runtime/cudnn, devel/cudnn) FROM runtime / devel. Only env the reference records
    # is added; runtime's NVIDIA_PRODUCT_NAME=CUDA was seen on one image only and stays out.
    layout = f"{CUDA_IMG} dist/<ver>/<os>/<flavor>/Dockerfile (FROM lines), nvidia-facts.md 8"
    stubs = "LIBRARY_PATH=/usr/local/cuda/lib64/stubs"
    return [
        {"flavor": "base", "env": [], "source": layout},
        {"flavor": "runtime", "parent": "base", "env": [], "source": layout},
        {"flavor": "devel", "parent": "runtime", "env": [stubs], "source": layout + "; cuda-image-env.json observations (devel sets LIBRARY_PATH to the link-time libcuda stub)"},
        {"flavor": "cudnn-runtime", "parent": "runtime", "env": [], "source": layout + " (runtime/cudnn)", "confidence": "uncertain", "note": "cuDNN env (NV_CUDNN_VERSION ...) not in the reference data"},
        {"flavor": "cudnn-devel", "parent": "devel", "env": [], "source": layout + " (devel/cudnn)", "confidence": "uncertain", "note": "cuDNN env (NV_CUDNN_VERSION ...) not in the reference data"},
    ]


# --- k8s-device-plugin resource naming ---------------------------------------------------------
def device_plugin_resource_names() -> list[dict]:
    res = load("device-plugin-releases.json")["resource_names"]
    readme = "NVIDIA/k8s-device-plugin README.md (Configuration option details: migStrategy)"
    consts = "NVIDIA/k8s-device-plugin api/config/v1/consts.go"
    return [
        {"name": "prefix", "value": "nvidia.com", "source": consts, "note": res["constraints"]},
        {"name": "full-gpu", "value": res["default"], "mig_strategies": ["none", "mixed"], "source": readme,
         "note": "whole GPUs; under mixed, GPUs without MIG enabled keep this name"},
        {"name": "mig-single", "value": "nvidia.com/gpu", "mig_strategies": ["single"], "source": readme, "note": res["mig_single"]},
        {"name": "mig-mixed", "value": "nvidia.com/mig-{profile}", "mig_strategies": ["mixed"], "source": readme,
         "note": res["mig_mixed"]},
        {"name": "shared-suffix", "value": ".shared", "source": "NVIDIA/k8s-device-plugin api/config/v1/sharing.go", "note": res["shared_rename"]},
        {"name": "max-length", "value": "63", "source": consts, "note": res["constraints"]},
    ]


# --- PTX ISA -> CUDA --------------------------------------------------------------------------------
# Verified with NVIDIA's own encoding of the PTX ISA release-history table (cuda-python) and the
# titles of the archived PTX ISA documents (11.0 GA -> 7.0, 12.2.1 -> 8.2, 12.4 -> 8.4, 13.1 -> 9.1).
# Releases older than CUDA 9.0 are left out (no matrix row reaches that far); 9.2+ are not verified.
PTX_SOURCE = ("https://docs.nvidia.com/cuda/parallel-thread-execution/#release-notes-ptx-release-history, as encoded by "
              "NVIDIA/cuda-python cuda/bindings/utils/_ptx_utils.py (get_minimal_required_cuda_ver_from_ptx_ver)")
PTX_ISA = [
    ("6.0", "9.0"), ("6.1", "9.1"), ("6.2", "9.2"), ("6.3", "10.0"), ("6.4", "10.1"), ("6.5", "10.2"),
    ("7.0", "11.0"), ("7.1", "11.1"), ("7.2", "11.2"), ("7.3", "11.3"), ("7.4", "11.4"), ("7.5", "11.5"),
    ("7.6", "11.6"), ("7.7", "11.7"), ("7.8", "11.8"), ("8.0", "12.0"), ("8.1", "12.1"), ("8.2", "12.2"),
    ("8.3", "12.3"), ("8.4", "12.4"), ("8.5", "12.5"), ("8.6", "12.7"), ("8.7", "12.8"), ("8.8", "12.9"),
    ("9.0", "13.0"), ("9.1", "13.1"),
]


def ptx_isa_versions() -> list[dict]:
    rows = []
    for ptx, cuda in PTX_ISA:
        row = {"ptx_isa": ptx, "min_cuda": cuda, "source": PTX_SOURCE}
        if ptx == "8.6":
            row["note"] = "CUDA 12.6 still emits PTX ISA 8.5; the table names 12.7 (no public 12.7 toolkit is in cuda_releases; R565 drivers report 12.7)"
        rows.append(row)
    return rows


# --- names NVIDIA software and images use -------------------------------------------------------
def nvidia_names() -> list[dict]:
    gfd = load("gfd-labels.json")
    gfd_src = f"{gfd['source_docs']}; {gfd['source_code']}"
    known = {label["name"] for label in gfd["labels"]}

    def labels(name: str, values: list[str], deprecated: bool = False) -> dict:
        missing = [v for v in values if v not in known]
        assert not missing, f"not in gfd-labels.json: {missing}"
        row = {"name": name, "kind": "node-label", "values": values, "source": gfd_src}
        if deprecated:
            row["deprecated"] = True
        return row

    product = next(label for label in gfd["labels"] if label["name"] == "nvidia.com/gpu.product")
    official = f"{CUDA_IMG} dist/*/Dockerfile (nvidia-facts.md 8; cuda-image-env.json)"
    ngc_env = "verbatim env dump of nvcr.io/nvidia/pytorch:23.10-py3 (nvidia-facts.md 7; ngc-containers.json)"
    rows = [
        labels("gfd-driver-version", ["nvidia.com/cuda.driver-version.full"]),
        labels("gfd-driver-version-parts", ["nvidia.com/cuda.driver-version.major", "nvidia.com/cuda.driver-version.minor", "nvidia.com/cuda.driver-version.revision"]),
        labels("gfd-driver-version-parts-deprecated", ["nvidia.com/cuda.driver.major", "nvidia.com/cuda.driver.minor", "nvidia.com/cuda.driver.rev"], True),
        {**labels("gfd-driver-cuda-version", ["nvidia.com/cuda.runtime-version.full"]), "note": "despite the name: the CUDA version the DRIVER supports"},
        labels("gfd-driver-cuda-version-parts", ["nvidia.com/cuda.runtime-version.major", "nvidia.com/cuda.runtime-version.minor"]),
        labels("gfd-driver-cuda-version-parts-deprecated", ["nvidia.com/cuda.runtime.major", "nvidia.com/cuda.runtime.minor"], True),
        labels("gfd-gpu-product", ["nvidia.com/gpu.product"]),
        labels("gfd-gpu-compute-capability", ["nvidia.com/gpu.compute.major", "nvidia.com/gpu.compute.minor"]),
        labels("gfd-gpu-family", ["nvidia.com/gpu.family"]),
        labels("gfd-gpu-count", ["nvidia.com/gpu.count"]),
        labels("gfd-mig-strategy", ["nvidia.com/mig.strategy"]),
        {"name": "gfd-label-prefix", "kind": "node-label-pattern", "values": ["nvidia.com/*"], "source": gfd_src},
        {"name": "gfd-gpu-node-labels", "kind": "node-label-pattern", "values": ["nvidia.com/gpu.*", "nvidia.com/cuda.*"],
         "source": gfd_src, "note": "GFD writes these only on nodes with an NVIDIA GPU (NVML found one)"},
        {"name": "nfd-nvidia-pci-label", "kind": "node-label-pattern", "values": ["feature.node.kubernetes.io/pci-10de*"],
         "source": "kubernetes-sigs/node-feature-discovery pci feature labels; 10de = NVIDIA's PCI vendor id"},
        {"name": "gfd-mig-mixed-count", "kind": "node-label-pattern", "values": [gfd["mig_mixed_pattern"]["label_keys"][0].replace("<X>", "{profile}")],
         "source": gfd_src, "note": "e.g. " + gfd["mig_mixed_pattern"]["example"]},
        {"name": "gfd-volatile-labels", "kind": "node-label-pattern",
         "values": ["nvidia.com/gfd.timestamp", "nvidia.com/gpu.clique", "nvidia.com/mig.config.state",
                    "nvidia.com/gpu-driver-upgrade-*", "nvidia.com/*.upgrade-*"],
         "source": gfd_src + "; GPU Operator upgrade/MIG-manager state labels (gfd-labels.json gpu_operator_labels_note)",
         "confidence": "uncertain", "note": "labels that change over time or per node on the same stack; the GPU Operator names are not verified"},
        {"name": "gfd-product-shared-suffix", "kind": "product-suffix", "values": ["-SHARED"], "source": gfd_src, "note": product["meaning"]},
        {"name": "gfd-product-mig-suffix", "kind": "product-suffix", "values": ["-MIG-{profile}"], "source": gfd_src, "note": "MIG single strategy, e.g. A100-SXM4-40GB-MIG-1g.5gb"},
        {"name": "device-plugin-images", "kind": "image-name", "values": ["k8s-device-plugin"],
         "source": "NVIDIA/k8s-device-plugin deployments/helm (image nvcr.io/nvidia/k8s-device-plugin); GPU Operator ClusterPolicy devicePlugin.image"},
        {"name": "toolkit-images", "kind": "image-name", "values": ["container-toolkit", "nvidia-container-toolkit"],
         "source": "GPU Operator ClusterPolicy toolkit.image (nvcr.io/nvidia/k8s/container-toolkit); NVIDIA/nvidia-container-toolkit image name"},
        {"name": "cuda-version-labels", "kind": "image-label", "values": ["com.nvidia.cuda.version"], "source": official},
        {"name": "official-cuda-env", "kind": "image-env", "values": ["NVARCH", "NV_CUDA_CUDART_VERSION", "NV_CUDA_COMPAT_PACKAGE"], "source": official},
        {"name": "official-cuda-maintainer-label", "kind": "image-label", "values": ["maintainer", "NVIDIA CORPORATION <cudatools@nvidia.com>"],
         "source": official, "note": "values = [label key, label value]"},
        {"name": "cudart-package-env", "kind": "image-env", "values": ["NV_CUDA_CUDART_VERSION"], "source": official, "note": "e.g. 12.4.127-1"},
        {"name": "ngc-driver-env", "kind": "image-env", "values": ["CUDA_DRIVER_VERSION"], "source": ngc_env},
        {"name": "ngc-product-env", "kind": "image-env", "values": ["NVIDIA_PRODUCT_NAME"], "source": ngc_env},
        {"name": "ngc-release-env", "kind": "image-env-pattern", "values": ["NVIDIA_{product}_VERSION"], "source": ngc_env, "note": "NVIDIA_PYTORCH_VERSION=23.10"},
    ]
    return rows


def main(version: str) -> str:
    tk_rel, tk_feat = toolkit()
    dp_rel, dp_feat, dp_req = device_plugin()
    sections = {
        "cuda_releases": cuda_releases(),
        "minor_version_compat": minor_version_compat(),
        "driver_branches": driver_branches(),
        "driver_lifecycle": lifecycle(),
        "forward_compat": forward_compat(),
        "forward_compat_brands": forward_compat_brands(),
        "gpus": gpus(),
        "toolkit_releases": tk_rel,
        "toolkit_features": tk_feat,
        "device_plugin_releases": dp_rel,
        "device_plugin_features": dp_feat,
        "device_plugin_requirements": dp_req,
        "gpu_operator_releases": gpu_operator(),
        "ngc_images": ngc(),
        "cuda_image_env": cuda_image_env(),
        "cuda_image_flavors": cuda_image_flavors(),
        "device_plugin_resource_names": device_plugin_resource_names(),
        "ptx_isa_versions": ptx_isa_versions(),
        "nvidia_names": nvidia_names(),
    }
    meta = {
        "kind": "imagelint-matrix",
        "schema_version": 1,
        "data_version": version,
        "description": "NVIDIA CUDA/driver/toolkit/device-plugin/GPU Operator compatibility data for imagelint",
    }
    header = (
        f"imagelint compatibility matrix {version}. Every row names its source; rows with\n"
        "confidence = \"uncertain\" could not be checked against a primary source and rules say so.\n"
        "Generated by tests/matrix/build_matrix_from_reference.py from the team's reference data; see docs/matrix.md."
    )
    return dump_matrix(meta, sections, header)


if __name__ == "__main__":
    sys.stdout.write(main(sys.argv[1] if len(sys.argv) > 1 else "2026-11-29"))
