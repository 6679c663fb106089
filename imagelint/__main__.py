"""The ``imagelint`` console script and ``python -m imagelint``.

``run()`` wraps ``imagelint.cli.main()`` (which raises SystemExit, so tests can call it
in-process) for a process of its own, where two things cost start-up time for nothing:

* The cyclic garbage collector. Importing the CLI (typer, click, imagelint's frozen
  dataclasses) allocates enough for ~50 collections during ``imagelint lint`` that find next
  to no garbage. The gen-0 threshold is raised before anything is imported. Memory stays
  bounded: what a layer read allocates per tar member is acyclic and freed by reference
  counting, and the collector still runs, only less often (tests/speed/test_console_entry.py).
* Interpreter teardown. Finalising every module and object after ``main`` returns costs
  tens of milliseconds (~45 M instructions, ~6% of a lint run). ``run`` flushes stdout and
  stderr, runs the atexit handlers (they matter: the kubernetes client deletes the temporary
  files it wrote a kubeconfig's client key and certificates to; ``weakref.finalize`` and
  ``tempfile.TemporaryDirectory`` clean up through them too), then leaves with ``os._exit``.
"""

from __future__ import annotations

import atexit
import gc
import os
import sys

from imagelint.errors import EXIT_BROKEN_PIPE  # a reader that went away: a quiet status 1

# gen-0 collections every 100,000 net allocations instead of 700; see the module docstring.
# (A check whose layers come from the cache allocates ~70,000 net: at 50,000 it ran one
# collection that found nothing and cost ~10 ms, 4% of the run.)
GC_THRESHOLD = (100_000, 20, 100)


def exit_status(code: object) -> int:
    """The status Python gives ``SystemExit(code)``: None → 0, an int → itself (as the OS
    keeps it, modulo 256), anything else → printed on stderr, 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    try:
        print(code, file=sys.stderr)
    except (OSError, ValueError):  # stderr closed or gone: the status is what matters
        pass
    return 1


def _flush_standard_streams(status: int) -> int:
    """Flush stdout then stderr; a reader that went away is not an error worth a traceback."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except BrokenPipeError:
            status = EXIT_BROKEN_PIPE if stream is sys.stdout else status
        except (OSError, ValueError):  # closed or unwritable: nothing more can be said
            pass
    return status


def run() -> None:
    """Console entry point: ``main()``, then exit with its status and without teardown."""
    gc.set_threshold(*GC_THRESHOLD)
    from imagelint.cli import main

    try:
        main()
        status = 0
    except SystemExit as exc:
        status = exit_status(exc.code)
    status = _flush_standard_streams(status)
    # CPython's own exit path runs the atexit handlers before finalising modules; os._exit
    # would skip them, so run them here (``_run_exitfuncs`` is how CPython does it).
    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)
    if run_exit_handlers is None:  # another implementation: take the ordinary way out
        sys.exit(status)
    run_exit_handlers()
    os._exit(_flush_standard_streams(status))  # flush again: what the handlers printed


if __name__ == "__main__":
    run()
