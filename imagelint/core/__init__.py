"""The run's core: what a run selects, how rules run over facts × target, and the two runs.

  config.py   the configuration (``.imagelint.toml`` / ``[tool.imagelint]``) and rule
              selection (``select`` / ``ignore`` by ID or prefix)
  engine.py   runs the selected rules; severity, suppression, redaction, the fail threshold
  check.py    ``run_check``: images × target → a ``CheckRun`` (what reports render)
  inspect.py  ``inspect_reference``: open an image, read its layers once, its facts

Nothing here imports typer (the CLI is ``imagelint/cli/``). Submodules are imported by
name (nothing is re-exported here) so that ``imagelint lint`` loads only what it uses.
"""
