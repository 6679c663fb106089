"""What the matrix answers about GPUs: products by any spelling, architecture names in build
settings, the names NVIDIA software uses.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from imagelint.matrix.answers import (
    GpuProduct,
    NvidiaName,
    name_from_row,
    row_uncertain,
)
from imagelint.matrix.rowstore import (
    RowStore,
    _gpu_key,
)

if TYPE_CHECKING:
    from imagelint.matrix.answers.gpus import GpuSearch, MigVariant


class GpuQueries(RowStore):
    """What the matrix answers about GPUs: products by any spelling, architecture names in build"""

    def mig_variants(self, gpu: str) -> tuple[MigVariant, ...]:
        """The MIG profiles of each memory variant of the GPU named ``gpu`` (its matrix name)."""
        from imagelint.matrix.answers.gpus import MigVariant

        return tuple(MigVariant(r["gpu"], r["memory_gb"], tuple(r["profiles"]), tuple(r.get("products", ())))
                     for r in self._section("mig_profiles") if r["gpu"] == gpu)

    # --- GPUs ----------------------------------------------------------------------------------
    def gpus(self) -> list[GpuProduct]:
        return [self._gpu(r) for r in self._section("gpus")]

    @staticmethod
    def _gpu(row: Mapping[str, Any]) -> GpuProduct:
        return GpuProduct(
            row["name"], tuple(row["aliases"]), row["compute_capability"], row["family"], row["brand"],
            row["brand_confidence"] == "uncertain", row["kind"], row["datacenter"], row["source"], row_uncertain(row),
            row.get("driver_stack"), row.get("tegra_last_branch"),
        )

    def gpu(self, name: str) -> GpuProduct | None:
        """Look a GPU up by product name or alias, ignoring case and separators
        (``H100``, ``NVIDIA-H100-80GB-HBM3``, ``Tesla-T4``, ``t4``, a GFD label with ``-SHARED``)."""
        key = _gpu_key(name)
        row = self._gpu_rows_by_key().get(key) if key else None
        return self._gpu(row) if row is not None else None

    def search_gpus(self, text: str) -> GpuSearch:
        """Exact name/alias first, so ``H20`` is the H20 and not every name containing "h20"; a
        substring over names, aliases, family, brand and compute capability second; near misses
        of a name or alias last."""
        from imagelint.matrix.answers.gpus import GpuSearch

        exact = self.gpu(text)
        if exact is not None:
            return GpuSearch(exact, (exact,), ())
        wanted = text.strip().lower()
        matches = tuple(
            self._gpu(r) for r in self._section("gpus")
            if wanted and any(wanted in str(v).lower()
                              for v in (r["name"], r["compute_capability"], r["family"], r["brand"], *r["aliases"]))
        )
        return GpuSearch(None, matches, () if matches else self.gpu_suggestions(text))

    def gpu_suggestions(self, text: str, limit: int = 3) -> tuple[str, ...]:
        """Product names whose name or an alias nearly spells ``text`` (closest first)."""
        import difflib

        key = _gpu_key(text)
        index = self._gpu_rows_by_key()
        names: list[str] = []
        for close in difflib.get_close_matches(key, list(index), n=limit * 3, cutoff=0.6) if key else ():
            name = index[close]["name"]
            if name not in names:
                names.append(name)
        return tuple(names[:limit])

    def _gpu_rows_by_key(self) -> dict[str, Mapping[str, Any]]:
        """Each name's and alias's key -> the first row that has it (built on first use: a check
        looks GPUs up hundreds of times, and keying every name each time was most of it)."""
        index = self.__dict__.get("_gpu_by_key")
        if index is None:
            index = {}
            for row in self._section("gpus"):
                for n in (row["name"], *row["aliases"]):
                    index.setdefault(_gpu_key(n), row)
            self.__dict__["_gpu_by_key"] = index  # beside the frozen fields: not compared, not shown
        return index

    # --- architecture names in build settings -------------------------------------------------
    def gpu_arch_names(self, tool: str = "pytorch") -> tuple[tuple[str, str], ...]:
        """(name, expansion) pairs a build tool expands in its arch list, combined names first
        ("Ampere+Tegra" before "Ampere": PyTorch replaces them as text, in this order)."""
        rows = [(r["name"], r["expands_to"]) for r in self._section("gpu_arch_names") if r["tool"] == tool]
        return tuple(sorted(rows, key=lambda r: ("+" not in r[0], rows.index(r))))

    # --- names NVIDIA software and images use -------------------------------------------------
    def nvidia_name(self, name: str) -> NvidiaName | None:
        row = next((r for r in self._section("nvidia_names") if r["name"] == name), None)
        return name_from_row(row) if row is not None else None
