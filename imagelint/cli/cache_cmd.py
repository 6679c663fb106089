"""``imagelint cache info|clean``: the cache of layer extracts and image facts."""

from __future__ import annotations

import json
from typing import Optional

import typer

from imagelint.cli import app

cache_app = typer.Typer(
    help="The cache: what was read from each layer (keyed by layer digest) and each image's facts.", no_args_is_help=True
)
app.add_typer(cache_app, name="cache")

CacheDirOpt = typer.Option(None, "--cache-dir", help="Cache directory (default $IMAGELINT_CACHE_DIR or ~/.cache/imagelint).")


def _cache(cache_dir: Optional[str]):  # type: ignore[no-untyped-def]
    from imagelint.cachedir import default_cache_dir
    from imagelint.layers.cache import LayerCache

    return LayerCache(cache_dir or default_cache_dir())


@cache_app.command("info")
def info(
    cache_dir: Optional[str] = CacheDirOpt,
    fmt: str = typer.Option("text", "--format", help="text or json."),
) -> None:
    """Where the cache is, how many entries (layer extracts and image facts) it holds and how big it is."""
    i = _cache(cache_dir).info()
    if fmt == "json":
        typer.echo(json.dumps({"directory": i.directory, "entries": i.entries, "bytes": i.total_bytes, "max_bytes": i.max_bytes}))
    else:
        typer.echo(f"directory: {i.directory}\nentries:   {i.entries}\nsize:      {i.total_bytes} bytes (limit {i.max_bytes})")


@cache_app.command("clean")
def clean(cache_dir: Optional[str] = CacheDirOpt) -> None:
    """Remove every cached entry (layer extracts, image facts, parsed matrices)."""
    cache = _cache(cache_dir)
    from imagelint.matrix.loader import clean_matrix_cache

    removed = cache.clean() + clean_matrix_cache(cache.directory / "matrix")
    typer.echo(f"removed {removed} cached entr{'y' if removed == 1 else 'ies'}")
