"""Safety limits for reading layers: a hostile or broken image fails fast, memory stays bounded."""

from __future__ import annotations

from dataclasses import dataclass

KiB = 1 << 10
MiB = 1 << 20
GiB = 1 << 30


@dataclass(frozen=True)
class ReadLimits:
    """Bounds on what reading one image may cost. Exceeding one is a ``LimitExceededError`` (exit 3).

    The defaults fit real 20 GB CUDA/PyTorch images with room to spare:
    ``max_member_read_bytes`` bounds one member read for content/head/scan
    (the largest CUDA libraries are ~1.5 GB); ``max_layer_inflated_bytes`` and
    ``max_image_inflated_bytes`` bound decompression (gzip bombs);
    ``max_members_per_layer`` counts tar headers (extension headers included);
    ``max_captured_bytes_per_layer`` bounds the bytes kept in memory from one
    layer (contents + heads); ``max_extension_header_bytes`` bounds one PAX or
    GNU long-name header.
    """

    max_member_read_bytes: int = 8 * GiB
    max_layer_inflated_bytes: int = 64 * GiB
    max_image_inflated_bytes: int = 256 * GiB
    max_members_per_layer: int = 5_000_000
    max_captured_bytes_per_layer: int = 256 * MiB
    max_extension_header_bytes: int = 1 * MiB

    def __post_init__(self) -> None:
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if not isinstance(value, int) or value <= 0:
                raise ValueError(f"ReadLimits.{name} must be a positive integer, not {value!r}")


DEFAULT_LIMITS = ReadLimits()
