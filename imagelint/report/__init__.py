"""Report formats: name → renderer. Each renderer turns a ``CheckRun`` into text.

Every format shows the same findings; none prints credentials (the engine has
already redacted secret-looking env values from findings).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Callable, Mapping

from imagelint.check import CheckRun


@dataclass(frozen=True)
class ReportOptions:
    color: bool = False


Renderer = Callable[[CheckRun, ReportOptions], str]


def _formats() -> Mapping[str, Renderer]:
    from imagelint.report import github, json, junit, sarif, text

    return MappingProxyType(
        {"text": text.render, "json": json.render, "sarif": sarif.render, "github": github.render, "junit": junit.render}
    )


FORMAT_NAMES = ("text", "json", "sarif", "github", "junit")


def render(fmt: str, run: CheckRun, options: ReportOptions | None = None) -> str:
    """Render ``run`` in format ``fmt`` (one of FORMAT_NAMES)."""
    return _formats()[fmt](run, options or ReportOptions())


__all__ = ["FORMAT_NAMES", "ReportOptions", "render"]
