"""The loaded matrix: ``Matrix`` holds the validated rows of one matrix file (plus overlays) and
answers the questions rules ask through its queries (``imagelint.matrix.queries``: CUDA and
drivers, GPUs, images, the node stack), with the typed answers of ``imagelint.matrix.answers``.
Rows whose source could not be verified carry ``uncertain=True``; rules must say so in their
findings rather than state them as fact.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from imagelint.matrix.queries.cuda import CudaQueries
from imagelint.matrix.queries.gpus import GpuQueries
from imagelint.matrix.queries.images import ImageQueries
from imagelint.matrix.queries.stack import StackQueries
from imagelint.matrix.rowstore import Rows


@dataclass(frozen=True)
class Matrix(CudaQueries, GpuQueries, ImageQueries, StackQueries):
    """One versioned matrix (with overlays applied). Build it with ``load_matrix``/``matrix_from_text``."""

    version: str
    schema_version: int
    origin: str
    sections: Rows = field(repr=False, compare=True)
    meta: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __hash__(self) -> int:
        # The row mappings are not hashable; a matrix is identified by its version and origin.
        return hash((self.version, self.schema_version, self.origin))


__all__ = ["Matrix"]
