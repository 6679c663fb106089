"""A/B two imagelint installs on the same commands, alternating, so the host's drift hits both.

    python3 benchmarks/ab.py --runs 4 --a OLD_VENV/bin/imagelint --b NEW_VENV/bin/imagelint \\
        -- check registry:HOST/bench/ngc:base --insecure-registry HOST --driver 550.54.15 --gpu H100 --no-cache

Each round runs A then B once; the medians and minima of wall and CPU (user + sys of the child)
are printed per install. Make the installs with ``python3 -m venv V && V/bin/pip install .`` at
the two commits (the benchmark's own registry: ``benchmarks/run.py`` leaves none running, so
start one with ``tests/support/registry.py`` and push with ``run.push_layout``).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import time


def run_once(argv: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    code = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env).returncode
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return wall, cpu, code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--a", required=True, help="the first imagelint executable")
    parser.add_argument("--b", required=True, help="the second imagelint executable")
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("args", nargs=argparse.REMAINDER, help="-- then imagelint's arguments")
    ns = parser.parse_args()
    args = ns.args[1:] if ns.args[:1] == ["--"] else ns.args
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # use the bytecode pip compiled
    results: dict[str, list[tuple[float, float]]] = {"A": [], "B": []}
    for _ in range(ns.runs):
        for label, exe in (("A", ns.a), ("B", ns.b)):
            wall, cpu, code = run_once([exe, *args], env)
            if code not in (0, 1):
                raise SystemExit(f"{label} exited {code}: {' '.join([exe, *args])}")
            results[label].append((wall, cpu))
    for label, exe in (("A", ns.a), ("B", ns.b)):
        walls = [w for w, _ in results[label]]
        cpus = [c for _, c in results[label]]
        print(f"{label} {exe}: wall median {statistics.median(walls):.2f} s (min {min(walls):.2f}), "
              f"CPU median {statistics.median(cpus):.2f} s")


if __name__ == "__main__":
    main()
