"""imagelint's own errors, each with the process exit code it maps to.

Exit codes are part of the public contract:
  0  nothing at or above the fail-on threshold
  1  findings at or above the threshold
  2  usage or configuration error (bad flag, bad config/target/matrix file)
  3  an image, registry, daemon or cluster could not be read (or the run reached --deadline)
  4  the output could not be written (stdout on a full disk, an I/O error): the verdict is unknown
  70 an internal error (a bug): reported in one line, never a traceback
  130 interrupted (Ctrl-C), as shells report a command ended by SIGINT

Every error carries a one-line message meant for people; the CLI prints it as
``imagelint: error: <message>`` and exits with ``exit_code``. Messages must never
contain credentials.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_UNREADABLE = 3
EXIT_OUTPUT = 4  # stdout could not take the report (ENOSPC, EIO); EPIPE is EXIT_BROKEN_PIPE
EXIT_INCOMPLETE = 5  # doctor saw no problem but could not read a stage that decides health: never a pass
# A reader that went away (``imagelint ... | head``): click's convention, a quiet status 1.
EXIT_BROKEN_PIPE = 1
EXIT_INTERNAL = 70  # a bug in imagelint (EX_SOFTWARE); never used for bad input
EXIT_INTERRUPTED = 130


class ImagelintError(Exception):
    """Base class. Subclasses set ``exit_code``."""

    exit_code = EXIT_UNREADABLE

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class UsageError(ImagelintError):
    """A flag or argument that does not make sense."""

    exit_code = EXIT_USAGE


class OutputError(ImagelintError):
    """A report, or the file it is to be written to, that cannot take it."""

    exit_code = EXIT_OUTPUT


class ConfigError(UsageError):
    """A configuration, target, matrix or lint input file that is wrong.

    ``path`` and ``line`` locate the problem when known; the message says what
    was expected.
    """

    def __init__(self, message: str, path: str | None = None, line: int | None = None) -> None:
        where = ""
        if path:
            where = f"{path}:{line}: " if line else f"{path}: "
        super().__init__(f"{where}{message}")
        self.path = path
        self.line = line


class SourceError(ImagelintError):
    """An image could not be read (registry, daemon, archive or layout)."""

    exit_code = EXIT_UNREADABLE


class RegistryError(SourceError):
    """A registry answered badly or not at all. The message names the registry and the step."""


class DaemonError(SourceError):
    """The Docker daemon could not be reached or does not have the image."""


class ImageFormatError(SourceError):
    """Bytes of an image (manifest, config, layer, archive) are malformed."""


class DigestMismatchError(ImageFormatError):
    """A blob or manifest does not hash to the digest it was fetched by."""


class LimitExceededError(ImageFormatError):
    """An image exceeded a configured safety limit (inflated bytes, members, document size)."""


class ClusterError(ImagelintError):
    """The Kubernetes API could not be read (unreachable, unauthorised, forbidden)."""

    exit_code = EXIT_UNREADABLE
