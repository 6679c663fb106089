"""The target: the node pools an image will run on, and every way of building one.

  model.py        ``Target``, ``NodePool``, ``GpuSpec``, ``Taint`` (frozen; rules read only these)
                  and ``merge_targets``
  values.py       the value grammar (driver / release versions, compute capability, arch,
                  runtime mode...) and GPU names resolved through the matrix
  options.py      ``TargetOptions`` (the target flags as values), ``target_from_flags``,
                  ``build_target`` (flags + target file + live cluster → one Target)
  file.py         the target file (TOML) reader, errors with file and line
  toml_writer.py  ``dump_target_toml``: a Target as a target file (``imagelint target snapshot``)
  describe.py     ``describe_target``: a Target as readable text (``imagelint target show``)

A live cluster is read by :mod:`imagelint.cluster` (``target_from_cluster``); the typer
flags are in ``imagelint/cli/target_options.py``. Only the model is re-exported here, so
``from imagelint.deploytarget import Target`` costs nothing more than the dataclasses.
"""

from __future__ import annotations

from imagelint.deploytarget.model import GpuSpec, NodePool, Taint, Target

__all__ = ["GpuSpec", "NodePool", "Target", "Taint"]
