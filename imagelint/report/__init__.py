"""Report formats: name → renderer. Each renderer turns a ``CheckRun`` into text.

Every format shows the same findings; none prints credentials (the engine has
already redacted secret-looking env values from findings).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable

from imagelint.core.check import CheckRun


@dataclass(frozen=True)
class ReportOptions:
    color: bool = False


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
