"""``imagelint cache info|clean``: the cache of layer extracts, image facts and parsed matrices.

Both commands count the same two kinds of entries, so what ``info`` reports is what ``clean``
removes; sizes are shown for people (``1.4 GiB``), exact bytes in ``--format json``. The size
limit (least recently used entries go first) is ``$IMAGELINT_CACHE_MAX_SIZE`` (``2G``, ``512M``;
default 512 MiB).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import typer

from imagelint.cli.failure import fail
from imagelint.cli.help import INFO_EXIT_CODES, epilog, examples
from imagelint.errors import ImagelintError

EPILOG = epilog(examples("imagelint cache info", "imagelint cache info --format json", "imagelint cache clean"),
                INFO_EXIT_CODES)

app = typer.Typer(
    name="cache",
    epilog=EPILOG,
    help="The cache: what was read from each layer (keyed by layer digest), each image's facts, parsed matrices.",
    no_args_is_help=True,
)

CacheDirOpt = typer.Option(None, "--cache-dir", help="Cache directory (default $IMAGELINT_CACHE_DIR or ~/.cache/imagelint).")


@dataclass(frozen=True)
class CacheCounts:
    """What ``imagelint cache info`` reports and ``cache clean`` removes: layer extracts and image
    facts, and parsed matrices, with their sizes."""

    directory: str
    entries: int        # layer extracts and image facts
    entry_bytes: int
    matrices: int       # parsed matrices
    matrix_bytes: int
    max_bytes: int


def _cache(cache_dir: Optional[str]):
    from imagelint.cachedir import cache_max_bytes, default_cache_dir
    from imagelint.layers.cache import DEFAULT_MAX_BYTES, LayerCache

    return LayerCache(cache_dir or default_cache_dir(), cache_max_bytes(DEFAULT_MAX_BYTES))


def _matrix_files(directory: Path) -> list[Path]:
    root = directory / "matrix"
    return [p for pattern in ("*.ilm", "*/*.ilx") for p in root.glob(pattern) if p.is_file()]


def counts(cache_dir: Optional[str]) -> CacheCounts:
    cache = _cache(cache_dir)
    i = cache.info()
    matrices = _matrix_files(cache.directory)
    return CacheCounts(i.directory, i.entries, i.total_bytes, len(matrices),
                       sum(p.stat().st_size for p in matrices), i.max_bytes)


@app.command("info", epilog=EPILOG)
def info(
    cache_dir: Optional[str] = CacheDirOpt,
    fmt: str = typer.Option("text", "--format", help="text or json."),
) -> None:
    """Where the cache is, how many entries it holds, how big it is and its limit."""
    from imagelint.cli.choices import TEXT_OR_JSON, choose
    from imagelint.sizes import human_size

    try:
        fmt = choose(fmt, TEXT_OR_JSON, "--format")
        c = counts(cache_dir)
    except ImagelintError as exc:
        raise fail(exc) from None
    if fmt == "json":
        typer.echo(json.dumps({"directory": c.directory, "entries": c.entries, "bytes": c.entry_bytes,
                               "matrices": c.matrices, "matrix_bytes": c.matrix_bytes, "max_bytes": c.max_bytes}))
        return
    typer.echo(f"directory: {c.directory}\n"
               f"entries:   {c.entries} layer extract(s) and image facts, {human_size(c.entry_bytes)}"
               f" (limit {human_size(c.max_bytes)}, $IMAGELINT_CACHE_MAX_SIZE)\n"
               f"matrices:  {c.matrices} parsed matri{'x' if c.matrices == 1 else 'ces'}, {human_size(c.matrix_bytes)}")


@app.command("clean", epilog=EPILOG)
def clean(cache_dir: Optional[str] = CacheDirOpt) -> None:
    """Remove every cached entry (layer extracts, image facts, parsed matrices)."""
    from imagelint.matrix.loader import clean_matrix_cache
    from imagelint.sizes import human_size

    try:
        before = counts(cache_dir)
        cache = _cache(cache_dir)
    except ImagelintError as exc:
        raise fail(exc) from None
    entries = cache.clean()
    matrices = clean_matrix_cache(cache.directory / "matrix")
    freed = before.entry_bytes + before.matrix_bytes
    typer.echo(f"removed {entries} layer extract(s) and image facts and {matrices} parsed "
               f"matri{'x' if matrices == 1 else 'ces'} ({human_size(freed)})")
