"""Which advertised resource name is nearest to one a container asks for (IL602's hint).

A pod asking for ``nvidia.com/mig-1g.5gb`` where a pool offers ``nvidia.com/mig-1g.10gb`` should be
told about that pool and that name, not about whichever pool came first. MIG names compare by
slice and memory (``<g>g.<mem>gb``, suffixes such as ``+me`` ignored); other names by spelling.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from imagelint.lazyre import lazy_pattern

_MIG = lazy_pattern(r"mig-([0-9]{1,3})g\.([0-9]{1,4})gb")  # ASCII, bounded: a resource name's digits go to int()


def _mig(name: str) -> tuple[int, int] | None:
    m = _MIG.search(name)
    return (int(m.group(1)), int(m.group(2))) if m else None


def _distance(wanted: str, offered: str) -> float:
    a, b = _mig(wanted), _mig(offered)
    if a and b:
        return abs(a[0] - b[0]) * 100 + abs(a[1] - b[1])  # the slice count first, then memory
    if a or b:
        return 10_000 + (1 - difflib.SequenceMatcher(None, wanted, offered).ratio())  # MIG vs not: far
    return 1_000 * (1 - difflib.SequenceMatcher(None, wanted, offered).ratio())


def nearest_resource(wanted: str, offers: Iterable[tuple[str, str]]) -> tuple[str, str] | None:
    """The ``(pool, resource)`` among ``offers`` nearest to ``wanted``; ties go to the first pool."""
    best: tuple[float, int, tuple[str, str]] | None = None
    for n, (pool, name) in enumerate(offers):
        score = (_distance(wanted, name), n, (pool, name))
        if best is None or score[:2] < best[:2]:
            best = score
    return best[2] if best else None
