"""``imagelint gpus [TEXT]`` and ``imagelint drivers [TEXT]``: what the matrix knows, searchable.

TEXT that spells a GPU's name or alias (any case, any separators) shows that GPU alone; other
TEXT matches any name, alias, family, brand or compute capability (GPUs), or a branch, CUDA
version or lifecycle designation (drivers; a driver version such as ``535.104.05`` or ``R570``
selects its branch), case-insensitively, as a substring; a GPU search that matches nothing names
the near misses. The names
listed are the ones ``--gpu`` and target files accept.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Optional

import typer

from imagelint.cli.choices import TEXT_OR_JSON, choose
from imagelint.cli.failure import fail
from imagelint.cli.help import INFO_EXIT_CODES, epilog, examples
from imagelint.cli.run_options import MatrixOpt, MatrixOverlayOpt
from imagelint.errors import ImagelintError

SearchArg = Annotated[Optional[str], typer.Argument(metavar="[TEXT]", help="Show only entries containing TEXT (any case).")]
FormatOpt = Annotated[str, typer.Option("--format", help="text or json.")]

app = typer.Typer()


def _load(matrix: str | None, overlays: list[str] | None) -> Any:
    from imagelint.matrix import load_matrix

    return load_matrix(matrix, tuple(overlays or ()))


def _matches(text: str | None, *values: Any) -> bool:
    if not text:
        return True
    wanted = text.strip().lower()
    return any(wanted in str(v).lower() for v in values if v not in (None, ""))


def _emit(rows: list[dict[str, Any]], columns: list[str], fmt: str, what: str, search: str | None) -> None:
    fmt = choose(fmt, TEXT_OR_JSON, "--format")
    if fmt == "json":
        typer.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        typer.echo(f"no {what} matches {search!r}" if search else f"the matrix lists no {what}")
        return
    table = [columns] + [[_cell(r.get(c)) for c in columns] for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(columns))]
    for row in table:
        typer.echo("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())


def _cell(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return "" if value is None else str(value)


@app.command("gpus", epilog=epilog(examples("imagelint gpus", "imagelint gpus h100", "imagelint gpus 8.9 --format json"),
                                   INFO_EXIT_CODES))
def gpus_command(search: SearchArg = None, format: FormatOpt = "text", matrix: MatrixOpt = None,
                 matrix_overlay: MatrixOverlayOpt = None) -> None:
    """List the GPUs the matrix knows (the names --gpu accepts), with compute capability, family and brand."""
    try:
        format = choose(format, TEXT_OR_JSON, "--format")
        m = _load(matrix, matrix_overlay)
        found = m.search_gpus(search) if search else None
        products = found.matches if found is not None else tuple(m.gpus())
        rows = [{"name": p.name, "compute_capability": p.compute_capability, "family": p.family,
                 "brand": p.brand, "aliases": list(p.aliases)} for p in products]
        if not rows and found is not None and found.suggestions and format == "text":
            typer.echo(f"no GPU matches {search!r}; did you mean {', '.join(found.suggestions)}?")
            return
        _emit(rows, ["name", "compute_capability", "family", "brand", "aliases"], format, "GPU", search)
    except ImagelintError as exc:
        raise fail(exc) from None


@app.command("drivers", epilog=epilog(examples("imagelint drivers", "imagelint drivers 550", "imagelint drivers 12.4 --format json"),
                                      INFO_EXIT_CODES))
def drivers_command(search: SearchArg = None, format: FormatOpt = "text", matrix: MatrixOpt = None,
                    matrix_overlay: MatrixOverlayOpt = None) -> None:
    """List the driver branches the matrix knows: the newest CUDA each runs, its support lifecycle and
    whether NVIDIA supports it today (TEXT may be a driver as --driver takes it: 535.104.05, R570)."""
    import datetime as _dt

    from imagelint.compat.lifecycle import driver_rows
    from imagelint.deploytarget.values import DriverVersion

    try:
        m = _load(matrix, matrix_overlay)
        as_driver = DriverVersion.parse(search) if search else None
        rows = [r for r in driver_rows(m, _dt.date.today(), as_driver) if as_driver or _matches(search, *r.values())]
        _emit(rows, ["branch", "max_cuda", "designation", "eol", "supported_today"], format, "driver branch", search)
    except ImagelintError as exc:
        raise fail(exc) from None
