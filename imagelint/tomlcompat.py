"""The TOML parser: ``tomllib`` on Python 3.11+, ``tomli`` on 3.10.

Imported on first use, not at start-up: a run without a config, target file or matrix
to parse (a warm ``imagelint lint``) never loads it.
"""

from __future__ import annotations

import sys
from types import ModuleType


def tomllib() -> ModuleType:
    if sys.version_info >= (3, 11):
        import tomllib as parser
    else:  # pragma: no cover - exercised on Python 3.10 only
        import tomli as parser
    return parser
