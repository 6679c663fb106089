"""Kubernetes API semantics imagelint judges by (API behaviour, not NVIDIA facts).

  scheduler.py  what the scheduler decides: tolerations against taints, node selectors and
                required node affinity against a pool's labels, resource quantities
  cel.py        the subset of CEL that DRA device selectors use, against a pool's GPUs

Read by the rules (IL60x), by ``lint --image`` (``static/scheduling.py``) and by ``doctor``.
"""
