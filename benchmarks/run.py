"""The speed benchmark (issue 6): imagelint against the decompression floor and its peers.

    python3 benchmarks/run.py [--work DIR] [--scale 1.0] [--runs 3] [--write-readme]

In one run on this machine it:

1. builds the ~2.3 GB / ~57k-file / 13-layer image with ``build_image.py`` (tags
   ``base`` and ``second`` share all but the top layer), unless DIR already holds it;
2. starts Debian's ``docker-registry`` on 127.0.0.1 (``tests/support/registry.py``) and
   pushes both tags with monolithic PUTs streamed from the blob files;
3. measures, each as the median of ``--runs`` child processes (wall time and peak
   RSS from ``os.wait4``): the isal floor, ``imagelint check`` cold / warm / second
   image / config-only, syft, trivy (empty cache) and ``imagelint lint Dockerfile``;
4. prints a table (and with ``--write-readme`` writes it into ``benchmarks/README.md``).

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
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))  # tests.support.registry

WORKERS = 2  # imagelint.layers.reader.DEFAULT_WORKERS: the floor uses the same parallelism
REPO_NAME = "bench/gpu"


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
    def rss_mb(self) -> float:
        return max(self.rss_kb) / 1024 if self.rss_kb else float("nan")


def run_child(argv: list[str], env: dict[str, str] | None = None, stdout=subprocess.DEVNULL) -> tuple[float, int, float, int, str]:
    """Run one child; (wall s, peak RSS KB, user+sys CPU s, exit code, stderr tail)."""
    err = tempfile.TemporaryFile()
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=stdout, stderr=err, stdin=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err.seek(0)
    tail = err.read().decode(errors="replace").strip().splitlines()[-3:]
    return wall, usage.ru_maxrss, usage.ru_utime + usage.ru_stime, proc.returncode, " | ".join(tail)


def measure(m: Measure, runs: int, argv: list[str], env: dict[str, str] | None = None,
            before=None, ok_codes=(0, 1)) -> Measure:  # type: ignore[no-untyped-def]
    m.command = " ".join(argv)
    for _ in range(runs):
        if before:
            before()
        wall, rss, cpu, code, tail = run_child(argv, env)
        if code not in ok_codes:
            m.failed = f"exit {code}: {tail}"
            break
        m.walls.append(wall)
        m.rss_kb.append(rss)
        m.cpu.append(cpu)
    return m


# --- image + registry -----------------------------------------------------------------------------


def build_or_reuse(work: Path, scale: float) -> dict:
    summary_path = work / "build.json"
    if summary_path.exists() and (work / "img" / "layout" / "index.json").exists():
        return json.loads(summary_path.read_text())
    out = subprocess.run([sys.executable, str(HERE / "build_image.py"), str(work / "img"), "--scale", str(scale)],
                         check=True, capture_output=True, text=True)
    summary_path.write_text(out.stdout)
    return json.loads(out.stdout)


def push_layout(base_url: str, layout: Path, repo: str) -> None:
    """Push every tag of an OCI layout: blobs as monolithic PUTs streamed from their files."""
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
        data = (blobs / entry["digest"].split(":", 1)[1]).read_bytes()
        manifest = json.loads(data)
        for d in [manifest["config"], *manifest["layers"]]:
            put_blob(d["digest"])
        r = s.put(f"{base_url}/v2/{repo}/manifests/{tag}", data=data, verify=False,
                  headers={"Content-Type": entry["mediaType"]})
        r.raise_for_status()


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
    return shutil.which(name)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "imagelint-bench")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--command", default="check", choices=("check", "inspect"),
                    help="imagelint command to time (inspect has the same reading path)")
    ap.add_argument("--skip-peers", action="store_true")
    ap.add_argument("--write-readme", action="store_true")
    args = ap.parse_args()
    work: Path = args.work
    work.mkdir(parents=True, exist_ok=True)

    from tests.support.registry import start_registry

    t0 = time.perf_counter()
    summary = build_or_reuse(work, args.scale)
    built_s = time.perf_counter() - t0
    layout = Path(summary["layout"])
    base = summary["images"]["base"]
    print(f"image: {base['layers']} layers, {base['files']} files, {base['uncompressed_bytes'] / 1e9:.2f} GB "
          f"uncompressed, {base['compressed_bytes'] / 1e9:.2f} GB gzip (build/reuse {built_s:.0f} s)", flush=True)

    regdir = Path(tempfile.mkdtemp(prefix="reg-", dir=work))
    server = start_registry(regdir, "plain")
    measures: list[Measure] = []
    try:
        t0 = time.perf_counter()
        push_layout(server.url, layout, REPO_NAME)
        print(f"registry {server.host}: pushed base+second in {time.perf_counter() - t0:.1f} s", flush=True)
        host = server.host
        ref_base, ref_second = f"registry:{host}/{REPO_NAME}:base", f"registry:{host}/{REPO_NAME}:second"
        manifest = json.loads((layout / "blobs" / "sha256" / base["manifest"].split(":", 1)[1]).read_bytes())
        layer_paths = [str(layout / "blobs" / "sha256" / l["digest"].split(":", 1)[1]) for l in manifest["layers"]]
        layer_digests = [l["digest"] for l in sorted(manifest["layers"], key=lambda l: -l["size"])]

        il = [sys.executable, "-m", "imagelint"]
        cmd = args.command
        # A realistic CI target: a driver and a GPU model, so every rule runs, IL401 included
        # (which makes check scan every library's fatbins, its costliest capture).
        flags = ["--insecure-registry", host, "--driver", "550.54.15", "--gpu", "H100"]
        out_flags = ["--format", "json"]
        # Bytecode as an installed wheel has it: this machine exports PYTHONDONTWRITEBYTECODE=1,
        # which would recompile every imagelint module on each run (~0.3 s). The cache goes to
        # a prefix under the work dir, never into the source tree.
        env = {**os.environ, "PYTHONWARNINGS": "ignore", "PYTHONPYCACHEPREFIX": str(work / "pycache")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.pop("IMAGELINT_CACHE_DIR", None)
        subprocess.run(il + ["check", ref_base, *flags, "--config-only"], env=env, check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fills the bytecode cache
        cache = work / "cache"

        def empty_cache() -> None:
            shutil.rmtree(cache, ignore_errors=True)

        def base_only_cache() -> None:
            empty_cache()
            subprocess.run(il + [cmd, ref_base, *flags, "--cache-dir", str(cache)], env=env, check=False,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        cache_flags = ["--cache-dir", str(cache)]
        runs = args.runs
        measures.append(measure(Measure("isal floor (local blob files)", note=f"{WORKERS} threads"), runs,
                                [sys.executable, "-c", FLOOR_SCRIPT, json.dumps(layer_paths), str(WORKERS)], ok_codes=(0,)))
        measures.append(measure(Measure("fetch + sha256 + isal floor", note=f"{WORKERS} threads, from the registry"), runs,
                                [sys.executable, "-c", FETCH_FLOOR_SCRIPT, server.url, REPO_NAME, json.dumps(layer_digests), str(WORKERS)],
                                ok_codes=(0,)))
        print("floors done", flush=True)
        cold = measure(Measure(f"imagelint {cmd} cold", note="empty cache"), runs,
                       il + [cmd, ref_base, *flags, *cache_flags, *out_flags], env, before=empty_cache)
        measures.append(cold)
        nocache = measure(Measure(f"imagelint {cmd} --no-cache", note="cache off"), 1,
                          il + [cmd, ref_base, *flags, "--no-cache", *out_flags], env)
        measures.append(nocache)
        base_only_cache()
        measures.append(measure(Measure(f"imagelint {cmd} warm", note="cache holds every layer"), runs,
                                il + [cmd, ref_base, *flags, *cache_flags, *out_flags], env))
        second = measure(Measure(f"imagelint {cmd} second image", note="cache holds the base image's layers"), runs,
                         il + [cmd, ref_second, *flags, *cache_flags, *out_flags], env, before=base_only_cache)
        measures.append(second)
        second_cold = measure(Measure(f"imagelint {cmd} second image cold", note="empty cache"), 1,
                              il + [cmd, ref_second, *flags, *cache_flags, *out_flags], env, before=empty_cache)
        measures.append(second_cold)
        no_gpu = [f for f in flags if f not in ("--gpu", "H100")]
        measures.append(measure(Measure(f"imagelint {cmd} cold, no --gpu", note="empty cache; fatbin scan not needed"), runs,
                                il + [cmd, ref_base, *no_gpu, *cache_flags, *out_flags], env, before=empty_cache))
        measures.append(measure(Measure(f"imagelint {cmd} --config-only", note="no layer read"), runs,
                                il + [cmd, ref_base, *flags, "--config-only", *out_flags], env))
        print("imagelint done", flush=True)
        if not args.skip_peers:
            if tool("syft"):
                senv = {**os.environ, "SYFT_CHECK_FOR_APP_UPDATE": "false", "SYFT_REGISTRY_INSECURE_USE_HTTP": "true"}
                measures.append(measure(Measure("syft scan -o json", note="no cache"), runs,
                                        [tool("syft"), "scan", f"registry:{host}/{REPO_NAME}:base", "-o", "json", "-q"], senv))
            if tool("trivy"):
                tcache = work / "trivy-cache"
                measures.append(measure(Measure("trivy image (SBOM)", note="empty cache each run"), runs,
                                        [tool("trivy"), "image", "--image-src", "remote", "--insecure", "--cache-dir", str(tcache),
                                         "--format", "cyclonedx", "--offline-scan", "--skip-db-update", "-q", f"{host}/{REPO_NAME}:base"],
                                        before=lambda: shutil.rmtree(tcache, ignore_errors=True), ok_codes=(0,)))
            print("peers done", flush=True)
        dockerfile = work / "Dockerfile"
        dockerfile.write_text('FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\nENV NVIDIA_VISIBLE_DEVICES=all\n'
                              'COPY app /app\nCMD ["python3", "/app/main.py"]\n')
        subprocess.run([tool("imagelint") or "imagelint", "lint", str(dockerfile)], env=env, check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # bytecode for the lint path
        measures.append(measure(Measure("imagelint lint Dockerfile", note="one file"), max(runs, 5),
                                [tool("imagelint") or "imagelint", "lint", str(dockerfile)], env))
        measures.append(measure(Measure("python3 -c pass", note="interpreter start-up on this machine"), max(runs, 5),
                                [sys.executable, "-c", "pass"], env))
    finally:
        server.stop()
        shutil.rmtree(regdir, ignore_errors=True)

    table = render(measures, summary, args)
    print(table)
    if args.write_readme:
        write_readme(table)


def _get(measures: list[Measure], *names: str) -> Measure | None:
    return next((m for name in names for m in measures if m.name == name and not m.failed), None)


def render(measures: list[Measure], summary: dict, args: argparse.Namespace) -> str:
    b = summary["images"]["base"]
    lines = [
        f"Image: {b['layers']} layers, {b['files']:,} files, {b['uncompressed_bytes'] / 1e9:.2f} GB uncompressed, "
        f"{b['compressed_bytes'] / 1e9:.2f} GB gzip (`benchmarks/build_image.py --scale {args.scale}`), served by "
        f"Debian's docker-registry 2.8 over plain HTTP on 127.0.0.1.",
        "",
        f"Machine: {machine()}.",
        "",
        f"Median of {args.runs} runs (wall time of the whole process; peak RSS = max ru_maxrss of the child).",
        "",
        "| what | wall (s) | CPU (s) | peak RSS (MB) | cache state / note |",
        "|---|---:|---:|---:|---|",
    ]
    for m in measures:
        if m.failed:
            lines.append(f"| {m.name} | failed | | | {m.failed[:120]} |")
            continue
        cpu = statistics.median(m.cpu) if m.cpu else float("nan")
        lines.append(f"| {m.name} | {m.wall:.2f} | {cpu:.2f} | {m.rss_mb:.0f} | {m.note} |")
    il = [f"imagelint {c}" for c in ("check", "inspect")]
    floor, fetch_floor = _get(measures, "isal floor (local blob files)"), _get(measures, "fetch + sha256 + isal floor")
    cold = _get(measures, *(f"{x} cold" for x in il))
    warm = _get(measures, *(f"{x} warm" for x in il))
    second = _get(measures, *(f"{x} second image" for x in il))
    second_cold = _get(measures, *(f"{x} second image cold" for x in il))
    syft, trivy = _get(measures, "syft scan -o json"), _get(measures, "trivy image (SBOM)")
    lines += ["", "| ratio | value | target |", "|---|---:|---|"]
    if floor and cold:
        lines.append(f"| cold ÷ isal floor (wall) | {cold.wall / floor.wall:.2f} | ≤ 1.3 |")
        lines.append(f"| cold ÷ isal floor (CPU) | {statistics.median(cold.cpu) / statistics.median(floor.cpu):.2f} | (informative) |")
    if fetch_floor and cold:
        lines.append(f"| cold ÷ (fetch + sha256 + isal) floor | {cold.wall / fetch_floor.wall:.2f} | (informative) |")
    if syft and cold:
        lines.append(f"| syft ÷ cold | {syft.wall / cold.wall:.1f} | ≥ 5 |")
    if trivy and cold:
        lines.append(f"| trivy ÷ cold | {trivy.wall / cold.wall:.1f} | > 1 |")
    if warm and cold:
        lines.append(f"| warm ÷ cold | {warm.wall / cold.wall:.1%} | warm ≤ 0.5 s wall |")
    if second and (second_cold or cold):
        ref = second_cold or cold
        lines.append(f"| second image ÷ its cold time | {second.wall / ref.wall:.1%} | ≤ 15 % |")
    return "\n".join(lines)


BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"


def write_readme(table: str) -> None:
    path = HERE / "README.md"
    text = path.read_text() if path.exists() else f"# Benchmarks\n\n{BEGIN}\n{END}\n"
    if BEGIN not in text:
        text += f"\n{BEGIN}\n{END}\n"
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    path.write_text(f"{head}{BEGIN}\nLatest run: {stamp} — `python3 benchmarks/run.py --write-readme`\n\n{table}\n{END}{tail}")


if __name__ == "__main__":
    main()
