"""imagelint: lint built GPU container images against the NVIDIA stack they will meet."""

from __future__ import annotations

__version__ = "0.1.0"
