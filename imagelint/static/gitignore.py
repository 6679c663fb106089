"""``.gitignore`` for ``imagelint lint DIR``: leave out what git itself ignores.

Git's own answer, not a re-implementation of its pattern rules (nested ``.gitignore`` files,
``.git/info/exclude``, the global excludes file, negations): ``git check-ignore --stdin -z`` over
the candidates a directory walk found. Outside a git work tree, or without git, nothing is
filtered (the walk's own excludes still apply). Bounded: one git process, a timeout, and paths
are passed on stdin, never as arguments.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Sequence

GIT_TIMEOUT = 20.0


def not_ignored(root: str, paths: Sequence[str]) -> tuple[str, ...]:
    """``paths`` (as given) without those git ignores in the work tree holding ``root``."""
    git = shutil.which("git")
    if not paths or git is None:
        return tuple(paths)
    cwd = root if os.path.isdir(root) else os.path.dirname(root) or "."
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    try:
        inside = subprocess.run([git, "rev-parse", "--is-inside-work-tree"], cwd=cwd, capture_output=True, text=True,
                                timeout=GIT_TIMEOUT, env=env)
        if inside.returncode != 0 or inside.stdout.strip() != "true":
            return tuple(paths)
        absolute = [os.path.abspath(p) for p in paths]
        proc = subprocess.run([git, "check-ignore", "--stdin", "-z"], cwd=cwd, input="\0".join(absolute) + "\0",
                              capture_output=True, text=True, timeout=GIT_TIMEOUT, env=env)
    except (OSError, subprocess.TimeoutExpired):
        return tuple(paths)
    if proc.returncode not in (0, 1):  # 1: nothing ignored; anything else: git could not say
        return tuple(paths)
    ignored = {os.path.abspath(p) for p in proc.stdout.split("\0") if p}
    return tuple(p for p, a in zip(paths, absolute) if a not in ignored)
