"""Start-up of the command line: ``imagelint lint`` of one Dockerfile and ``imagelint --help``.

    python3 benchmarks/startup.py --runs 10

Each round runs ``python -c pass`` (the interpreter's own floor on this machine), then
``imagelint lint Dockerfile``, then ``imagelint --help``, as child processes with the output
thrown away; the rounds interleave the three so that the load of a shared machine hits them
alike. It prints the median and minimum wall time and the median CPU time (user + sys of the
child) of each. Targets (issue 28): lint of one Dockerfile ≤ 0.5 s and ``--help`` ≤ 0.5 s,
median of 10.

By default imagelint is this tree's (``python -m imagelint`` with the repository root first
on ``sys.path``); ``--imagelint PATH`` times another install's console script instead. The
matrix cache and the bytecode cache (``PYTHONPYCACHEPREFIX``, whatever ``PYTHONDONTWRITEBYTECODE``
says: pip precompiles an install's bytecode) are private directories warmed by one untimed run
of each command, as on a developer's machine after the first commit.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCKERFILE = 'FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\nENV NVIDIA_VISIBLE_DEVICES=all\nCMD ["python3"]\n'
TARGET_SECONDS = 0.5


def run_once(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one child; a failure is a wrong benchmark, not a slow one."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.decode(errors='replace')[-500:]}")
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--imagelint", help="an installed imagelint console script (default: this tree, python -m imagelint)")
    ns = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="imagelint-startup-") as work_dir:
        work = Path(work_dir)
        (work / "Dockerfile").write_text(DOCKERFILE)
        env = {k: v for k, v in os.environ.items()
               if k not in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
        env["IMAGELINT_CACHE_DIR"] = str(work / "cache")
        # Bytecode as users have it (pip precompiles), kept out of the tree.
        env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
        if ns.imagelint:
            imagelint = [ns.imagelint]
        else:
            imagelint = [sys.executable, "-m", "imagelint"]
            env["PYTHONPATH"] = str(ROOT)
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "imagelint lint Dockerfile": [*imagelint, "lint", "Dockerfile"],
            "imagelint --help": [*imagelint, "--help"],
        }
        for argv in commands.values():  # fills the matrix cache and the bytecode cache
            run_once(argv, env, work)
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(ns.runs):
            for name, argv in commands.items():
                times[name].append(run_once(argv, env, work))

    print(f"{ns.runs} interleaved rounds; imagelint: {' '.join(imagelint)}; load average {os.getloadavg()[0]:.2f}")
    print(f"{'what':<28} {'wall median':>12} {'wall min':>9} {'CPU median':>11}")
    failed = False
    for name, samples in times.items():
        walls, cpus = [w for w, _ in samples], [c for _, c in samples]
        median = statistics.median(walls)
        target = "" if name.startswith("python") else f"  (target ≤ {TARGET_SECONDS} s)"
        failed |= bool(target) and median > TARGET_SECONDS
        print(f"{name:<28} {median:>11.3f}s {min(walls):>8.3f}s {statistics.median(cpus):>10.3f}s{target}")
    if failed:
        raise SystemExit("a start-up target is missed")


if __name__ == "__main__":
    main()
