# The native tar header scanner's interface (built from _tarscan.c by setup.py).
from typing_extensions import Buffer

# One wanted member: (name, normalised path, type flag, size, mode, link name, header offset).
ScannedMember = tuple[str, str, str, int, int, str, int]

def scan(
    window: Buffer, pos: int, base: int, budget: int, prefilter: tuple[object, ...], seen: set[str], /
) -> tuple[list[ScannedMember], int, int, int, int]: ...

# The reader's window step for the members it takes its usual way (see _tarscan.c): records them
# into the context's dicts and returns how many it took from ``first``.
def take(members: list[ScannedMember], first: int, window: Buffer, base: int, context: tuple[object, ...], /) -> int: ...
