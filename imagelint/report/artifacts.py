"""Where a report points findings that are not in a repository file, and the repository itself.

Kept apart from ``report.sarif`` so that ``ReportOptions`` (and the CLI) can name it without
importing the SARIF writer.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from imagelint.localfile import enclosing_repository

# The finding locations that are files of the repository (SARIF, annotations and JUnit point there).
REPOSITORY_KINDS = ("dockerfile", "manifest", "appconfig")


@dataclass(frozen=True)
class SarifArtifacts:
    """Where SARIF points findings that are not in a repository file.

    ``root``: the repository root (absolute). ``anchor``: the fallback file
    (absolute) — ``--sarif-artifact``, else the config file. ``dockerfiles``:
    image reference → its Dockerfile; ``dockerfile``: for every other image.
    """

    root: str
    anchor: str | None = None
    dockerfiles: Mapping[str, str] = field(default_factory=dict)
    dockerfile: str | None = None


def repository_root(start: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """``GITHUB_WORKSPACE`` when the working directory is inside it, else the nearest
    directory holding ``.git``, else the working directory."""
    env = os.environ if environ is None else environ
    here = os.path.realpath(start or os.getcwd())
    workspace = env.get("GITHUB_WORKSPACE")
    if workspace:
        ws = os.path.realpath(workspace)
        if here == ws or here.startswith(ws.rstrip(os.sep) + os.sep):
            return ws
    return enclosing_repository(here) or here


def repository_path(path: str, root: str) -> str | None:
    """``path`` relative to ``root`` in POSIX form, or None when it is outside the repository."""
    rel = os.path.relpath(os.path.realpath(path), root)
    if rel == ".." or rel.startswith(".." + os.sep) or os.path.isabs(rel):
        return None
    return rel.replace(os.sep, "/")


