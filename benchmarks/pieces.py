"""Where one cold ``imagelint check`` goes, piece by piece: wall and process CPU of each.

    WORK/venv/bin/python benchmarks/pieces.py IMAGE [check options...]

Run it with the interpreter imagelint is installed in (the benchmark's venv: bytecode precompiled,
as users have it) and an empty cache (``IMAGELINT_CACHE_DIR=$(mktemp -d)``) for a cold check. It
imports the CLI, then the core, then runs the check with timers around reading the layers, the
facts and the rules, and prints one line a piece on standard error. The pieces overlap (reading
the layers is inside the check); "the whole check" less the pieces inside it is the rest: the
matrix, the config and the report. Not a test: nothing here asserts.
"""

from __future__ import annotations

import sys
import time

START_WALL, START_CPU = time.perf_counter(), time.process_time()
MARKS: list[tuple[str, float, float]] = []


def mark(label: str, wall: float, cpu: float) -> None:
    MARKS.append((label, time.perf_counter() - wall, time.process_time() - cpu))


def timed(module: object, name: str, label: str) -> None:
    """Replace ``module.name`` (a function) with one that records its wall and CPU time."""
    inner = getattr(module, name)

    def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            return inner(*args, **kwargs)
        finally:
            mark(label, wall, cpu)

    setattr(module, name, wrapper)


def main() -> None:
    import imagelint.cli.entry as entry

    mark("import the CLI (typer, click, imagelint.cli)", START_WALL, START_CPU)
    wall, cpu = time.perf_counter(), time.process_time()
    import imagelint.core.check as check
    import imagelint.core.inspect  # noqa: F401  (what a check imports to read an image)
    import imagelint.facts.capture  # noqa: F401
    import imagelint.facts.collect as collect
    import imagelint.layers.cache  # noqa: F401
    import imagelint.layers.reader as reader

    mark("import the core (check, rules, matrix, layer reader, facts)", wall, cpu)
    timed(reader, "read_image_filesystem", "read the layers (fetch, inflate, per-member capture, merge)")
    timed(collect, "collect_image_facts", "facts from the merged filesystem")
    timed(check, "run_rules", "rules")
    sys.argv = ["imagelint", "check", *sys.argv[1:]]
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        entry.main()
    except SystemExit:
        pass
    mark("the whole check after the CLI import", wall, cpu)
    mark("whole process", START_WALL, START_CPU)
    for label, w, c in MARKS:
        print(f"{label:62s} wall {w * 1000:7.0f} ms  CPU {c * 1000:7.0f} ms", file=sys.stderr)


if __name__ == "__main__":
    main()
