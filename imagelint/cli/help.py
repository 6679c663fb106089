"""The plain-text parts of ``--help`` that several commands share: exit codes, image references.

click rewraps an epilog's paragraphs unless a paragraph starts with a line holding only ``\\b``;
every block here starts with one, so each line prints as written.
"""

from __future__ import annotations

# The image-reference grammar (imagelint.reference holds the parser).
REFERENCES = """\
\b
Image references:
  registry:HOST/REPO[:TAG][@DIGEST]   a registry, no daemon
  docker:NAME[:TAG]                   the local Docker daemon
  docker-archive:PATH[:REPO:TAG]      a `docker save` tarball
  oci-dir:PATH[:TAG]                  an OCI image layout directory
  oci-archive:PATH[:TAG]              an OCI image layout in a tar
  anything else                       an existing path, else a name (daemon, then registry)"""

EXIT_CODES = """\
\b
Exit codes:
  0    nothing at or above --fail-on (default: error)
  1    findings at or above --fail-on
  2    usage or configuration error
  3    an image, registry, daemon or cluster could not be read, or the run reached --deadline
  4    the report could not be written
  130  interrupted (Ctrl-C); a reader that went away (imagelint ... | head) ends quietly with 1"""


# The top-level help: every code any command ends with (imagelint.errors), doctor's 5 included.
ALL_EXIT_CODES = EXIT_CODES.replace(
    "\n  130 ",
    "\n  5    doctor only: no problem seen, but a stage that decides health could not be read"
    "\n  70   an internal error (a bug), said in one line\n  130 ", 1)


def exit_codes(*rows: tuple[int, str]) -> str:
    """An ``Exit codes:`` block for a command whose codes are not check's; 130 (Ctrl-C) is added."""
    rows = (*rows, (130, "interrupted (Ctrl-C)"))
    return "\b\nExit codes:\n" + "\n".join(f"  {code:<4} {meaning}" for code, meaning in rows)


# What a command that only reads imagelint's own data (rules, the matrix, the cache) can end with.
INFO_EXIT_CODES = exit_codes((0, "done"), (2, "usage or configuration error (a bad flag, value or file, named)"))


def examples(*lines: str) -> str:
    """An ``Examples:`` block, one command line each."""
    return "\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines)


def epilog(*blocks: str) -> str:
    """The blocks of a command's epilog, a blank line between them."""
    return "\n\n".join(blocks)


__all__ = ["ALL_EXIT_CODES", "EXIT_CODES", "INFO_EXIT_CODES", "REFERENCES", "epilog", "examples", "exit_codes"]
