"""One way to read an enumerated flag value: case-insensitive (``--fail-on ERROR``), one line when wrong."""

from __future__ import annotations

from typing import Sequence

from imagelint.errors import UsageError


def choose(value: str, allowed: Sequence[str], flag: str) -> str:
    """``value`` as one of ``allowed`` (compared without case or surrounding space); UsageError otherwise."""
    wanted = value.strip().lower()
    for choice in allowed:
        if choice.lower() == wanted:
            return choice
    raise UsageError(f"{flag} must be one of {', '.join(allowed)}, not {value!r}")


# The --format choices of every command that prints either a text or a JSON report.
TEXT_OR_JSON = ("text", "json")
