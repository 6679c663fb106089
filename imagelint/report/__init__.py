"""Report formats: name → renderer. Each renderer turns a ``CheckRun`` into text.

Every format shows the same findings; none prints credentials (the engine has
already redacted secret-looking env values from findings).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from imagelint.core.check import CheckRun

if TYPE_CHECKING:
    from imagelint.report.artifacts import SarifArtifacts


@dataclass(frozen=True)
class ReportOptions:
    color: bool = False
    # Where SARIF points image findings (None: the working directory's repository, the config file).
    sarif_artifacts: SarifArtifacts | None = None
    # The CLI prints each unreadable image's error on stderr: a report on stdout then names the
    # image as unreadable without repeating the message (printed once, in the same terminal).
    errors_on_stderr: bool = False
    quiet: bool = False  # text: findings only


Renderer = Callable[[CheckRun, ReportOptions], str]


# Each format is the module ``imagelint.report.<name>`` with a ``render`` function.
FORMAT_NAMES = ("text", "json", "sarif", "github", "junit")


def _renderer(fmt: str) -> Renderer:
    # Only the format asked for is imported (junit pulls in xml.etree): start-up matters for the hook.
    if fmt not in FORMAT_NAMES:
        raise KeyError(fmt)
    return importlib.import_module(f"imagelint.report.{fmt}").render


def render(fmt: str, run: CheckRun, options: ReportOptions | None = None) -> str:
    """Render ``run`` in format ``fmt`` (one of FORMAT_NAMES)."""
    return _renderer(fmt)(run, options or ReportOptions())


__all__ = ["FORMAT_NAMES", "ReportOptions", "render"]
