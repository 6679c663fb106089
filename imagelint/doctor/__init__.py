"""``imagelint doctor --cluster``: why GPU pods stay Pending, fail to start or share a GPU.

The chain has five stages, each hiding the failure of the one before it, and one failure no
stage reports:

  1 driver ready on the node        node_stages.check_driver
  2 device plugin registered        node_stages.check_device_plugin
  3 node advertises the GPUs        node_stages.check_advertised
  4 scheduler can place the pod     scheduling.check_scheduling
  5 runtime hands the GPU over      runtime.check_runtime
  6 isolation                       isolation.check_isolation

``snapshot`` reads the cluster once through ``imagelint.cluster``'s readers (read-only, every
list optional: a refusal makes a stage "not checked", never fails the run); ``context`` gives
the stages their view of it; what a log line, an event or a spec condition means and how to
fix it is data, ``matrices/doctor-signatures.toml`` (``imagelint.matrix.doctor_signatures``);
a pod spec is read by ``imagelint.static`` (``workloads``); scheduling semantics are the IL60x
rules' (``imagelint.kube.scheduler``). ``render`` writes text and JSON (docs/doctor-schema.json).
Nothing here imports typer.
"""

from __future__ import annotations

from imagelint.doctor.model import (
    Diagnosis,
    DoctorReport,
    Evidence,
    ObjectRef,
    StageResult,
)
from imagelint.doctor.run import diagnose, run_doctor
from imagelint.doctor.snapshot import DoctorOptions

__all__ = ["DoctorOptions", "DoctorReport", "Evidence", "Diagnosis", "ObjectRef", "StageResult", "diagnose", "run_doctor"]
