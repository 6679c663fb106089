"""``imagelint gpus [TEXT]`` and ``imagelint drivers [TEXT]``: what the matrix knows, searchable.

TEXT that spells a GPU's name or alias (any case, any separators) shows that GPU alone; other
TEXT matches any name, alias, family, brand or compute capability (GPUs), or a branch, CUDA
version or lifecycle designation (drivers), case-insensitively, as a substring; a GPU search
that matches nothing names the near misses. The names
listed are the ones ``--gpu`` and target files accept.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Optional

from imagelint.cli import fail, root
from imagelint.cli.run_options import MatrixOpt, MatrixOverlayOpt
from imagelint.cli.spec import Argument, Option, echo
from imagelint.errors import ImagelintError

SearchArg = Annotated[Optional[str], Argument(metavar="[TEXT]", help="Show only entries containing TEXT (any case).")]
FormatOpt = Annotated[str, Option("--format", help="text or json.")]


def _load(matrix: str | None, overlays: list[str] | None) -> Any:
    from imagelint.matrix import load_matrix

    return load_matrix(matrix, tuple(overlays or ()))


def _matches(text: str | None, *values: Any) -> bool:
    if not text:
        return True
    wanted = text.strip().lower()
    return any(wanted in str(v).lower() for v in values if v not in (None, ""))


def _emit(rows: list[dict[str, Any]], columns: list[str], fmt: str, what: str, search: str | None) -> None:
    from imagelint.cli.choices import choose

    fmt = choose(fmt, ("text", "json"), "--format")
    if fmt == "json":
        echo(json.dumps(rows, indent=2))
        return
    if not rows:
        echo(f"no {what} matches {search!r}" if search else f"the matrix lists no {what}")
        return
    table = [columns] + [[_cell(r.get(c)) for c in columns] for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(columns))]
    for row in table:
        echo("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())


def _cell(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return "" if value is None else str(value)


@root.command("gpus")
def gpus_command(search: SearchArg = None, format: FormatOpt = "text", matrix: MatrixOpt = None,
                 matrix_overlay: MatrixOverlayOpt = None) -> None:
    """List the GPUs the matrix knows (the names --gpu accepts), with compute capability, family and brand."""
    try:
        m = _load(matrix, matrix_overlay)
        found = m.search_gpus(search) if search else None
        products = found.matches if found is not None else tuple(m.gpus())
        rows = [{"name": p.name, "compute_capability": p.compute_capability, "family": p.family,
                 "brand": p.brand, "aliases": list(p.aliases)} for p in products]
        if not rows and found is not None and found.suggestions and format == "text":
            echo(f"no GPU matches {search!r}; did you mean {', '.join(found.suggestions)}?")
            return
        _emit(rows, ["name", "compute_capability", "family", "brand", "aliases"], format, "GPU", search)
    except ImagelintError as exc:
        raise fail(exc) from None


@root.command("drivers")
def drivers_command(search: SearchArg = None, format: FormatOpt = "text", matrix: MatrixOpt = None,
                    matrix_overlay: MatrixOverlayOpt = None) -> None:
    """List the driver branches the matrix knows: the newest CUDA each runs, and its support lifecycle."""
    try:
        m = _load(matrix, matrix_overlay)
        life = {r.get("branch"): r for r in m.rows("driver_lifecycle")}
        rows = []
        for r in m.rows("driver_branches"):
            lc = life.get(r.get("branch"), {})
            row = {"branch": r.get("branch"), "max_cuda": r.get("max_cuda"), "designation": lc.get("designation"),
                   "eol": lc.get("eol_date") or lc.get("eol")}
            if _matches(search, *row.values()):
                rows.append(row)
        _emit(rows, ["branch", "max_cuda", "designation", "eol"], format, "driver branch", search)
    except ImagelintError as exc:
        raise fail(exc) from None
