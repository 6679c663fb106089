"""``python -m imagelint`` and the ``imagelint`` console script: the CLI's ``main``."""

from __future__ import annotations

from imagelint.cli import main


def run() -> None:
    """The console script's entry point (``[project.scripts]`` in pyproject.toml)."""
    main()


if __name__ == "__main__":
    run()
