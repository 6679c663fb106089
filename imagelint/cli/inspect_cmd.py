"""``imagelint inspect REF``: show the facts imagelint reads from an image, with where each came from."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer

from imagelint.cli.failure import fail
from imagelint.cli.help import REFERENCES, epilog, examples, exit_codes
from imagelint.cli.source_options import with_source_options
from imagelint.errors import ImagelintError

if TYPE_CHECKING:
    from imagelint.sources import SourceOptions

app = typer.Typer()

EPILOG = epilog(
    examples(
        "imagelint inspect oci-dir:examples/cuda-app",
        "imagelint inspect registry:nvcr.io/nvidia/pytorch:24.05-py3 --format json",
        "imagelint inspect docker:trainer:dev --config-only",
    ),
    REFERENCES,
    exit_codes((0, "the facts were printed"), (2, "usage error"), (3, "the image could not be read, or the run reached --deadline")),
)


@app.command("inspect", epilog=EPILOG)
@with_source_options
def inspect_command(
    ref: Annotated[str, typer.Argument(help="Image: registry:/docker:/docker-archive:/oci-dir:/oci-archive: reference, a path, or a name.")],
    source_options: SourceOptions,
    output_format: Annotated[str, typer.Option("--format", help="Output format: text or json.")] = "text",
    config_only: Annotated[bool, typer.Option("--config-only", help="Read only the manifest and config, not the layers.")] = False,
) -> None:
    """Show CUDA versions, driver libraries, loader paths and GPU settings found in an image."""
    from imagelint.core.inspect import inspect_reference
    from imagelint.report.facts import facts_to_json, facts_to_text

    try:
        from imagelint.cli.choices import TEXT_OR_JSON, choose

        output_format = choose(output_format, TEXT_OR_JSON, "--format")
        from imagelint.cli.progress import progress_line

        with progress_line():
            facts = inspect_reference(ref, source_options, read_layers=not config_only)
    except ImagelintError as exc:
        raise fail(exc) from None
    if output_format == "json":
        docs = [facts_to_json(f) for f in facts]
        typer.echo(json.dumps(docs if source_options.all_platforms else docs[0], indent=2, sort_keys=False))
    else:
        typer.echo("\n".join(facts_to_text(f) for f in facts), nl=False)
