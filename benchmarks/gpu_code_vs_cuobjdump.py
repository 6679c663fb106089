"""How right imagelint's GPU-code facts and IL401's verdicts are on real libraries from PyPI.

Not a test: a measurement (issue #12). For each wheel it downloads (into --dest, outside the
repository; nothing is committed), every shared library is

1. scanned by imagelint's fatbin scanner exactly as the layer reader feeds it (64 KB chunks,
   payloads the scanner calls skippable dropped unread), and
2. listed by NVIDIA's cuobjdump (``--list-elf --list-ptx``, arch by arch when cuobjdump refuses
   an architecture it no longer supports) with each PTX's ``.version`` directive read from
   ``--dump-ptx``: the oracle.

It reports the share of libraries whose SASS and PTX arch sets (and PTX ISA versions) equal
cuobjdump's, and IL401's verdict (the rule itself, on a pool of that compute capability and
driver branch) per compute capability and driver against NVIDIA's rules applied to the
oracle's listing by the small independent implementation below (``nvidia_rule``), so a
mistake shared with imagelint's own code would not hide.

    python benchmarks/gpu_code_vs_cuobjdump.py --dest /tmp/gpucode
    python benchmarks/gpu_code_vs_cuobjdump.py --dest /tmp/gpucode bitsandbytes==0.45.5 cupy-cuda12x

Needs the network (PyPI) and the dev install (it reuses tests/facts/fatbin_support for
cuobjdump, which it installs into tests/.cache).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# Libraries NOT used while developing the scanner (the tests use nvcc builds and nvjpeg-cu11).
DEFAULT_WHEELS = (
    "bitsandbytes==0.45.5",  # CUDA 11.8 .. 12.6 builds
    "bitsandbytes",
    "cupy-cuda12x",
    "nvidia-curand-cu12",
    "nvidia-nvjpeg-cu12",
    "nvidia-cufft-cu12",
    "nvidia-npp-cu12",
    "nvidia-cusparse-cu12",
)
CCS = ((6, 1), (7, 0), (7, 5), (8, 0), (8, 6), (8, 9), (9, 0), (10, 0), (12, 0))
# NVIDIA's numbers for the oracle, written out here rather than read from imagelint's matrix:
# the branch's CUDA version (CUDA release notes, Table 3) and that release's PTX ISA (PTX ISA
# release notes: 12.2 -> 8.2, 13.0 -> 9.0).
DRIVERS = {"535": ("12.2", (8, 2)), "580": ("13.0", (9, 0))}


# --- imagelint's side ------------------------------------------------------------------------


def imagelint_scan(path: Path) -> dict:
    from imagelint.facts.fatbin import FatbinScanner

    s = FatbinScanner()
    with path.open("rb") as f:
        while True:
            k = s.skippable()
            if k:
                here = f.tell()
                f.seek(0, 2)
                n = min(k, f.tell() - here)
                f.seek(here + n)
                if n == 0:
                    break
                s.skipped(n)
                continue
            chunk = f.read(1 << 16)
            if not chunk:
                break
            s.feed(chunk)
    return s.result()


def il401_outcome(scan: dict, path: str, cc: tuple[int, int], driver: str) -> str:
    """IL401's verdict for one library on one pool: the rule itself, through its public check()."""
    from imagelint.deploytarget import GpuSpec, NodePool, Target
    from imagelint.facts.fatbin import code_object_details
    from imagelint.facts.model import GpuCodeObject, ImageFacts, Provenance
    from imagelint.rules import no_kernel_for_gpu
    from imagelint.rules.base import RuleContext

    obj = GpuCodeObject(path, tuple(scan["sass"]), tuple(scan["ptx"]), Provenance(kind="file", path=path),
                        **code_object_details(scan))
    facts = ImageFacts(subject="measure", kind="image", gpu_code=(obj,))
    pool = NodePool("p", driver=driver, gpus=(GpuSpec(compute_capability=f"{cc[0]}.{cc[1]}"),))
    found = list(no_kernel_for_gpu.check(RuleContext(facts, Target(pools=(pool,), source="flags"), _matrix())))
    if not found:
        return "sass"
    [finding] = found
    return str(finding.extra["outcome"])


_M = None


def _matrix():  # type: ignore[no-untyped-def]
    global _M
    if _M is None:
        from imagelint.matrix import load_matrix

        _M = load_matrix()
    return _M


# --- the oracle -------------------------------------------------------------------------------


def ptx_versions(path: Path, cuobjdump: Path, ptx: set[str]) -> dict[str, tuple[int, int]]:
    """The ``.version`` directive of each PTX, from cuobjdump's dump (the newest per arch)."""
    out: dict[str, tuple[int, int]] = {}
    archs = [None] if ptx else []
    for arch in archs + [p.replace("compute_", "sm_") for p in sorted(ptx)]:
        args = [str(cuobjdump), "--dump-ptx", *(["-arch", arch] if arch else []), str(path)]
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace")
        current = None
        assert proc.stdout is not None
        for line in proc.stdout:
            m = re.match(r"^arch = (sm_\w+)", line)
            if m:
                current = m.group(1).replace("sm_", "compute_")
                continue
            m = re.match(r"^\s*\.version (\d+)\.(\d+)", line)
            if m and current:
                v = (int(m.group(1)), int(m.group(2)))
                out[current] = max(out.get(current, v), v)
        proc.wait()
        if proc.returncode == 0 and arch is None:
            break  # the whole file was dumped
    return out


def _runs(target: str, cc: tuple[int, int]) -> bool:
    """NVIDIA's rule for one target (CUDA Programming Guide, compute capabilities / compatibility)."""
    m = re.match(r"^(sm|compute)_(\d+?)(\d)([af]?)$", target)
    if m is None:
        return False
    built = (int(m.group(2)), int(m.group(3)))
    if m.group(4) == "a":
        return cc == built
    if m.group(1) == "compute" and not m.group(4):
        return cc >= built
    return cc[0] == built[0] and cc[1] >= built[1]


def nvidia_rule(sass: set[str], ptx: dict[str, tuple[int, int] | None], cc: tuple[int, int], driver: str) -> str:
    if any(_runs(s, cc) for s in sass):
        return "sass"
    fitting = [isa for p, isa in ptx.items() if _runs(p, cc)]
    if not fitting:
        return "no-kernel"
    if any(isa is None for isa in fitting):
        return "jit-unknown-isa"
    return "jit" if min(fitting) <= DRIVERS[driver][1] else "ptx-too-new"  # type: ignore[type-var]


ORACLE_FAILED: list[str] = []
OWN_LOADED: set[str] = set()
OWN_LOADED_CELLS: list[str] = []
UNVERIFIABLE_CELLS: list[str] = []


# --- driving ----------------------------------------------------------------------------------


def download(spec: str, dest: Path) -> Path | None:
    where = dest / "wheels" / re.sub(r"[^A-Za-z0-9_.-]", "_", spec)
    found = sorted(where.glob("*.whl")) if where.is_dir() else []
    if not found:
        where.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                               "--platform", "manylinux2014_x86_64", "--platform", "manylinux_2_24_x86_64",
                               "--platform", "manylinux_2_27_x86_64", "--platform", "manylinux_2_28_x86_64",
                               "--python-version", "3.11", "-d", str(where), spec],
                              capture_output=True, text=True, timeout=1800)
        found = sorted(where.glob("*.whl"))
        if proc.returncode != 0 or not found:
            print(f"skip {spec}: {proc.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
            return None
    return found[-1]


def libraries(whl: Path, dest: Path) -> list[Path]:
    out = []
    root = dest / "extract" / whl.stem
    with zipfile.ZipFile(whl) as z:
        for info in z.infolist():
            name = info.filename
            if info.is_dir() or not re.search(r"\.so(\.\d+)*$", name):
                continue
            target = root / name
            if not target.is_file():
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(z.read(info))
            out.append(target)
    return out


@dataclasses.dataclass
class Row:
    library: str
    sass_equal: bool
    ptx_equal: bool
    isa_equal: bool
    verdicts: int
    verdicts_agree: int
    verdicts_agree_all_fatbins: int  # had every fatbin counted (as before issue #12): __nv_relfatbin too
    ours: dict
    oracle: dict
    disagreements: list


def measure(lib: Path, dest: Path) -> Row | None:
    from tests.facts.fatbin_support import (
        as_cuobjdump_names,
        cuobjdump,
        cuobjdump_oracle,
    )

    scan = imagelint_scan(lib)
    oracle = cuobjdump_oracle(lib)
    sass, ptx_, unchecked = oracle.sass, oracle.ptx, oracle.unchecked
    has_code = scan["sass"] or scan["ptx"] or scan["not_loaded"] or sass or ptx_
    if not has_code:
        return None
    name = str(lib.relative_to(dest / "extract"))
    if oracle.error:
        print(f"n/a       {name}: cuobjdump failed ({oracle.error[:80]}); imagelint: {scan['sass']} {scan['ptx']}")
        ORACLE_FAILED.append(name)
        return None
    versions = ptx_versions(lib, cuobjdump(), ptx_)
    ours_sass = as_cuobjdump_names(scan["sass"]) - unchecked
    ours_isa = {p: tuple(int(x) for x in v.split(".")) for p, v in scan["ptx_isa"].items()}
    disagreements = []
    total = agree = agree_all = 0
    rel = scan["not_loaded"].get("__nv_relfatbin", {"sass": [], "ptx": []})
    everything = dict(scan, sass=sorted({*scan["sass"], *rel["sass"]}), ptx=sorted({*scan["ptx"], *rel["ptx"]}),
                      not_loaded={})  # as before: -rdc code counted as loaded
    for driver in DRIVERS:
        for cc in CCS:
            expected = nvidia_rule(sass, {p: versions.get(p) for p in ptx_}, cc, driver)
            got = il401_outcome(scan, name, cc, driver)
            if expected != "sass" and any(_runs(u, cc) or _runs(u.replace("sm_", "compute_"), cc) for u in unchecked):
                # cuobjdump 13 cannot be asked about this architecture (sm_35..sm_72 of a CUDA 11
                # library listed arch by arch): its listing may lack code that runs here.
                UNVERIFIABLE_CELLS.append(name)
                continue
            if got == "own-loaded-code" and expected == "no-kernel":
                # Kernels in the library's own fatbins (cuFFT's .ldata): cuobjdump lists only what the
                # runtime registers, so the oracle cannot judge this cell.
                OWN_LOADED.add(name)
                OWN_LOADED_CELLS.append(name)
                continue
            total += 1
            agree_all += il401_outcome(everything, name, cc, driver) == expected
            if got == expected:
                agree += 1
            else:
                disagreements.append(f"{cc[0]}.{cc[1]}/R{driver}: IL401 {got}, NVIDIA's rules {expected}")
    return Row(name, ours_sass == sass, set(scan["ptx"]) == ptx_, ours_isa == {p: versions.get(p) for p in ptx_},
               total, agree, agree_all, {"sass": scan["sass"], "ptx": scan["ptx"], "ptx_isa": scan["ptx_isa"],
                              "not_loaded": scan["not_loaded"], "unplaced": scan["unplaced"]},
               {"sass": sorted(sass), "ptx": sorted(ptx_), "unchecked": sorted(unchecked),
                "ptx_isa": {p: ".".join(map(str, v)) for p, v in sorted(versions.items())}}, disagreements)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("wheels", nargs="*", default=list(DEFAULT_WHEELS))
    ap.add_argument("--dest", type=Path, default=Path("/tmp/imagelint-gpucode"))
    ap.add_argument("--json", type=Path, help="write every row here")
    args = ap.parse_args(argv)
    rows: list[Row] = []
    for spec in args.wheels:
        whl = download(spec, args.dest)
        if whl is None:
            continue
        for lib in libraries(whl, args.dest):
            row = measure(lib, args.dest)
            if row is None:
                continue
            rows.append(row)
            ok = "ok " if row.sass_equal and row.ptx_equal and row.isa_equal else "DIFF"
            print(f"{ok} {row.verdicts_agree:>2}/{row.verdicts} {row.library}"
                  + (f"  not loaded: {sorted(row.ours['not_loaded'])}" if row.ours["not_loaded"] else ""))
            for d in row.disagreements:
                print(f"       {d}")
            if ok == "DIFF":
                print(f"       imagelint {row.ours}\n       cuobjdump {row.oracle}")
    if not rows:
        print("no library with GPU code measured")
        return 1
    arch_ok = sum(r.sass_equal and r.ptx_equal for r in rows)
    isa_ok = sum(r.isa_equal for r in rows)
    cells = sum(r.verdicts for r in rows)
    cells_ok = sum(r.verdicts_agree for r in rows)
    cells_all = sum(r.verdicts_agree_all_fatbins for r in rows)
    print(f"\n{len(rows)} libraries with GPU code from {len(args.wheels)} wheels"
          + (f" (and {len(ORACLE_FAILED)} that cuobjdump could not read, left out)" if ORACLE_FAILED else ""))
    print(f"SASS+PTX arch sets equal to cuobjdump's: {arch_ok}/{len(rows)} ({100 * arch_ok / len(rows):.1f}%)")
    print(f"PTX ISA versions equal to the PTX .version directives: {isa_ok}/{len(rows)}")
    print(f"IL401 verdicts matching NVIDIA's rules ({len(CCS)} compute capabilities x drivers "
          f"{', '.join('R' + d for d in DRIVERS)}): {cells_ok}/{cells} ({100 * cells_ok / cells:.1f}%)")
    print(f"  had __nv_relfatbin been counted as loaded code (as before): {cells_all}/{cells} "
          f"({100 * cells_all / cells:.1f}%)")
    if UNVERIFIABLE_CELLS:
        print(f"not compared: {len(UNVERIFIABLE_CELLS)} cells of {len(set(UNVERIFIABLE_CELLS))} libraries where "
              "code for the GPU may be of an architecture this cuobjdump cannot list (sm_35..sm_72)")
    if OWN_LOADED:
        print(f"not compared: {len(OWN_LOADED_CELLS)} cells of {len(OWN_LOADED)} libraries whose kernels for the GPU "
              f"are in fatbins they load themselves ({', '.join(sorted(n.rsplit('/', 1)[-1] for n in OWN_LOADED))}): "
              "IL401 says so (info); cuobjdump does not list them")
    if args.json:
        args.json.write_text(json.dumps([dataclasses.asdict(r) for r in rows], indent=1))
    return 0 if arch_ok == len(rows) and cells_ok == cells else 1


if __name__ == "__main__":
    sys.exit(main())
