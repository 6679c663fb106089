"""Regular expressions compiled when first used, not when their module is imported.

Compiling a pattern runs the standard library's regex parser and code generator, which are
Python code, and many of imagelint's module-level patterns serve paths a run never takes (a
rule whose facts are absent, YAML configs in an image without any). ``lazy_pattern`` defers
the compile to the first use, and ``tests/speed/test_startup.py`` asserts that importing
imagelint compiles none of its own.

A ``LazyPattern`` offers the ``re.Pattern`` methods and attributes; after the first use they
are the compiled pattern's own bound methods, set on the instance, so a hot loop pays one
instance-dict lookup per call, as it would on a compiled pattern. It is not an instance of
``re.Pattern``: to hand one to a function that wants a real pattern, pass ``.compiled``.
"""

from __future__ import annotations

import re
from typing import Any, AnyStr, cast

_DELEGATED = ("match", "fullmatch", "search", "findall", "finditer", "sub", "subn", "split",
              "flags", "groups", "groupindex")


class LazyPattern:
    """One pattern, compiled on the first access to anything but its source text."""

    def __init__(self, pattern: str | bytes, flags: int = 0) -> None:
        self.pattern = pattern
        self._flags = flags

    @property
    def compiled(self) -> re.Pattern[Any]:
        """The compiled pattern (compiled now if it was not yet)."""
        compiled = self.__dict__.get("_compiled")
        if compiled is not None:
            return compiled
        compiled = re.compile(self.pattern, self._flags)
        # Two threads may get here at once: both compile the same pattern, and either result serves.
        for name in _DELEGATED:
            setattr(self, name, getattr(compiled, name))
        self._compiled = compiled
        return compiled

    def __getattr__(self, name: str) -> Any:
        # Called only for names not yet on the instance: the first use of a delegated one.
        if name not in _DELEGATED:
            raise AttributeError(name)
        return getattr(self.compiled, name)

    def __repr__(self) -> str:
        return f"lazy_pattern({self.pattern!r}{f', {self._flags}' if self._flags else ''})"


def lazy_pattern(pattern: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:
    """``re.compile(pattern, flags)``, compiled on first use (typed as the pattern it stands for;
    a bytes pattern, such as a shebang's, is one too)."""
    return cast("re.Pattern[AnyStr]", LazyPattern(pattern, flags))
