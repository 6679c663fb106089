"""Answers about GPUs: MIG variants, a search of the GPU table.

Imported by the query that builds them (see ``imagelint.matrix.answers``).
"""

from __future__ import annotations

from dataclasses import dataclass

from imagelint.matrix.answers import GpuProduct


@dataclass(frozen=True)
class MigVariant:
    """The MIG profiles of one memory variant of a GPU (A100 40 GB / 80 GB)."""

    gpu: str
    memory_gb: int
    profiles: tuple[str, ...]  # without the ``mig-`` prefix: 3g.40gb, 1g.10gb+me
    products: tuple[str, ...]  # product names that are this variant


@dataclass(frozen=True)
class GpuSearch:
    """What a GPU search text names: the one product it spells exactly (name or alias, any case or
    separators), else the products whose name, alias, family, brand or compute capability contain
    it, else the names it nearly spells ("did you mean")."""

    exact: GpuProduct | None
    matches: tuple[GpuProduct, ...]
    suggestions: tuple[str, ...]
