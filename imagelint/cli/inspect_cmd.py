"""``imagelint inspect REF``: show the facts imagelint reads from an image, with where each came from."""

from __future__ import annotations

import json
from typing import Annotated

from imagelint.cli import fail, root
from imagelint.cli.common import with_source_options
from imagelint.cli.spec import Argument, Option, echo
from imagelint.errors import ImagelintError
from imagelint.sources import SourceOptions

FORMATS = ("text", "json")


@root.command("inspect")
@with_source_options
def inspect_command(
    ref: Annotated[str, Argument(help="Image: registry:/docker:/docker-archive:/oci-dir:/oci-archive: reference, a path, or a name.")],
    source_options: SourceOptions,
    output_format: Annotated[str, Option("--format", help="Output format: text or json.")] = "text",
    config_only: Annotated[bool, Option("--config-only", help="Read only the manifest and config, not the layers.")] = False,
) -> None:
    """Show CUDA versions, driver libraries, loader paths and GPU settings found in an image."""
    from imagelint.core.inspect import facts_to_json, facts_to_text, inspect_reference

    try:
        from imagelint.cli.choices import choose

        output_format = choose(output_format, FORMATS, "--format")
        from imagelint.cli.progress import progress_line

        with progress_line():
            facts = inspect_reference(ref, source_options, read_layers=not config_only)
    except ImagelintError as exc:
        raise fail(exc) from None
    if output_format == "json":
        docs = [facts_to_json(f) for f in facts]
        echo(json.dumps(docs if source_options.all_platforms else docs[0], indent=2, sort_keys=False))
    else:
        echo("\n".join(facts_to_text(f) for f in facts), nl=False)
