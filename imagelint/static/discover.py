"""``imagelint lint DIR``: the files under a directory that ``lint`` may read, by name.

A bounded walk (depth, file count) that skips what is never a repository's own source: VCS and
tool directories (``.git``, ``node_modules``, virtualenvs, caches, ``vendor``/``third_party``) and
files over the lint size limit. Names are matched by ``detect.FILES_REGEX`` (the pre-commit
hook's pattern), and content decides later, as for files given one by one; files found by the
walk that turn out to be no kind ``lint`` reads are dropped without a note (a directory holds many
unrelated YAML files), unlike files named on the command line. What git ignores
(``.gitignore`` files, ``.git/info/exclude``, the global excludes) is left out too, by reading
those files as git would, never by running git in the tree (:mod:`imagelint.static.gitignore`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from imagelint.static.detect import FILES_REGEX
from imagelint.static.gitignore import not_ignored

EXCLUDED_DIRS = frozenset({
    ".git", ".hg", ".svn", "node_modules", ".venv", "venv", ".tox", ".nox", "__pycache__", ".mypy_cache",
    ".pytest_cache", ".ruff_cache", ".idea", ".vscode", "vendor", "third_party", "site-packages", ".terraform",
})
MAX_DEPTH = 32
MAX_FILES = 100_000


@dataclass(frozen=True)
class Discovered:
    """Files found under a directory, in a stable order, and what was left out."""

    files: tuple[str, ...]
    truncated: bool = False
    image_layouts: tuple[str, ...] = ()  # OCI image layouts found (built images, not source): not walked


def discover(root: str, max_files: int = MAX_FILES) -> Discovered:
    """Candidate files under ``root`` (sorted, relative to the current directory as given)."""
    rx = re.compile(FILES_REGEX)
    out: list[str] = []
    layouts: list[str] = []
    base_depth = root.rstrip(os.sep).count(os.sep)
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        if is_image_layout(dirpath):
            layouts.append(dirpath)
            dirnames[:] = []
            continue
        dirnames[:] = sorted(d for d in dirnames if d not in EXCLUDED_DIRS and not d.endswith(".egg-info"))
        if dirpath.count(os.sep) - base_depth >= MAX_DEPTH:
            dirnames[:] = []
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            if rx.search(path.replace(os.sep, "/")) and not os.path.islink(path):
                out.append(path)
                if len(out) >= max_files:
                    return Discovered(not_ignored(root, out), truncated=True, image_layouts=tuple(layouts))
    return Discovered(not_ignored(root, out), image_layouts=tuple(layouts))


def is_image_layout(path: str) -> bool:
    """An OCI image layout directory (``oci-layout`` and ``index.json``): a built image, which
    ``imagelint check oci-dir:PATH`` reads."""
    return os.path.isfile(os.path.join(path, "oci-layout")) and os.path.isfile(os.path.join(path, "index.json"))
