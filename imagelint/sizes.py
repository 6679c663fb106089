"""Byte sizes as people write and read them: ``64G``, ``512MiB``, ``1.5K`` in; ``1.4 GiB`` out."""

from __future__ import annotations

from imagelint.errors import UsageError
from imagelint.untrusted import parse_float

MAX_SIZE_BYTES = float(1 << 60)  # 1 EiB: past any image; bounds a flag such as --max-image-size 1e400
_SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(flag: str, text: str) -> int:
    """``64G``, ``512M``, ``1.5T``, ``4096`` (bytes) → bytes; binary units; UsageError otherwise."""
    value = text.strip().upper().removesuffix("IB").removesuffix("B")
    unit = value[-1:] if value[-1:] in _SIZE_UNITS and value[-1:] else ""
    number = value[: len(value) - len(unit)]
    try:
        size = int(parse_float(number, flag, minimum=0, maximum=MAX_SIZE_BYTES / _SIZE_UNITS[unit]) * _SIZE_UNITS[unit])
    except ValueError:
        raise UsageError(f"{flag} {text!r}: expected a size such as 64G, 512M or 4096") from None
    if size <= 0:
        raise UsageError(f"{flag} must be positive")
    return size


def human_size(n: int) -> str:
    """``1536`` → ``1.5 KiB``; bytes below 1 KiB as ``812 B``."""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{int(size)} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"  # pragma: no cover
