"""Shell completion for values (``--install-completion``): report formats, rule IDs, GPU names.

Each function is typer's ``autocompletion`` callback: what was typed → the words that start
with it (any case). Comma-separated values (``--select IL1,IL3``) complete
their last item. Nothing here may fail: a completion that raises would print a traceback into the
user's shell, so a matrix that cannot be loaded completes no GPU names.
"""

from __future__ import annotations

from typing import Iterable


def _starting(words: Iterable[str], incomplete: str) -> list[str]:
    head, comma, last = incomplete.rpartition(",")
    prefix = head + comma
    return [prefix + w for w in words if w.lower().startswith(last.lower())]


def formats(incomplete: str) -> list[str]:
    from imagelint.report import FORMAT_NAMES

    return _starting(FORMAT_NAMES, incomplete)


def rule_ids(incomplete: str) -> list[str]:
    from imagelint.rules import RULES

    return _starting(RULES, incomplete)


def gpu_names(incomplete: str) -> list[str]:
    try:
        from imagelint.matrix import load_matrix

        # The short names --gpu takes (H100, T4) are the aliases; the full names work too.
        products = [name for g in load_matrix(None, ()).gpus() for name in (*g.aliases, g.name)]
    except Exception:  # a broken matrix completes nothing; the command itself says why
        return []
    return sorted(set(_starting((p for p in products if p), incomplete)))


__all__ = ["formats", "gpu_names", "rule_ids"]
