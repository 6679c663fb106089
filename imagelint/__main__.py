"""``python -m imagelint`` and the ``imagelint`` console script: the CLI's ``main``."""

from __future__ import annotations

import gc

from imagelint.cli import main

# How many container objects the young generation takes before the cyclic collector runs (700 by
# default). Reading an image allocates hundreds of thousands of small ones (members, entries, the
# merged tree's nodes) that hold no cycles and mostly live to the end; at 700 the collector runs a
# few hundred times a read and walks that growing heap in its older generations again and again.
_YOUNG_GENERATION = 20_000


def run() -> None:
    """The console script's entry point (``[project.scripts]`` in pyproject.toml).

    The collector is tuned for one command per process, here only: ``main`` is also called
    in-process (by the tests), where neither setting belongs. When the command has ended, what it
    built is frozen out of the collector: the process is about to exit, and the interpreter's own
    collections at shutdown would walk every object the run left (the modules, a read image's
    entries) only to free memory the exit frees anyway. Exit handlers still run.
    """
    gc.set_threshold(_YOUNG_GENERATION, *gc.get_threshold()[1:])
    try:
        main()
    finally:
        gc.freeze()


if __name__ == "__main__":
    run()
