"""Run imagelint's ``main()`` in a fresh interpreter and see what it imported.

``probe(args)`` gives the exit code, every module in ``sys.modules`` at the end, and stdout.
Start-up tests use it to assert what a command line does not import (the network stacks and
the image side for lint).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

_PROBE = r"""
import json, sys
sys.argv = ["imagelint", *json.loads(sys.argv[1])]
from imagelint.cli import main
code = 0
try:
    main()
except SystemExit as exc:
    code = exc.code or 0
print(json.dumps({"code": code, "all": sorted(sys.modules)}), file=sys.stderr)
"""


def probe(args: list[str], env: dict[str, str | None] | None = None, cwd: str | None = None) -> tuple[int, set[str], str]:
    """Exit code, every module imported, stdout. ``env`` adds to this process's environment;
    a None value removes that variable."""
    environ = dict(os.environ)
    for key, value in (env or {}).items():
        if value is None:
            environ.pop(key, None)
        else:
            environ[key] = value
    done = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(args)], capture_output=True, text=True,
                          timeout=120, env=environ, cwd=cwd)
    report = json.loads(done.stderr.strip().splitlines()[-1])
    return report["code"], set(report["all"]), done.stdout
