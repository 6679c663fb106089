"""Report formats: name → renderer. Each renderer turns a ``CheckRun`` into text.

Every format shows the same findings; none prints credentials (the engine has
already redacted secret-looking env values from findings).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from imagelint.core.check import CheckRun

if TYPE_CHECKING:
    from imagelint.report.artifacts import SarifArtifacts


@dataclass(frozen=True)
class ReportOptions:
    """Choices the CLI passes to every renderer besides the run itself (colour, quiet, where SARIF points)."""

    color: bool = False
    # Where SARIF points image findings (None: the working directory's repository, the config file).
    sarif_artifacts: SarifArtifacts | None = None
    # The CLI prints each unreadable image's error on stderr: a report on stdout then names the
    # image as unreadable without repeating the message (printed once, in the same terminal).
    errors_on_stderr: bool = False
    quiet: bool = False  # text: findings only


Renderer = Callable[[CheckRun, ReportOptions], str]


# Each format is the module ``imagelint.report.<name>`` with a ``render`` function (and, when it
# can write a result at a time, ``render_pieces``).
FORMAT_NAMES = ("text", "json", "sarif", "github", "junit")


def _renderer(fmt: str) -> Renderer:
    # Only the format asked for is imported (junit pulls in xml.etree): start-up matters for the hook.
    if fmt not in FORMAT_NAMES:
        raise KeyError(fmt)
    return importlib.import_module(f"imagelint.report.{fmt}").render


def render(fmt: str, run: CheckRun, options: ReportOptions | None = None) -> str:
    """Render ``run`` in format ``fmt`` (one of FORMAT_NAMES)."""
    return _renderer(fmt)(run, options or ReportOptions())


def render_pieces(fmt: str, run: CheckRun, options: ReportOptions | None = None) -> Iterable[str]:
    """``render``'s text in pieces, for writing: a format that can give a result at a time (its
    module's ``render_pieces``: json) does, so a run of many results is never one text in memory.
    Any other format is rendered here, whole: a failure (SARIF's limits) is raised before a
    byte is written."""
    if fmt not in FORMAT_NAMES:
        raise KeyError(fmt)
    module = importlib.import_module(f"imagelint.report.{fmt}")
    pieces = getattr(module, "render_pieces", None)
    if pieces is None:
        return (module.render(run, options or ReportOptions()),)
    return pieces(run, options or ReportOptions())


__all__ = ["FORMAT_NAMES", "ReportOptions", "render", "render_pieces"]
