"""The scheduler's FailedScheduling message as counted reasons, in the wordings real clusters use."""

from __future__ import annotations

from imagelint.doctor.scheduler_message import Reason, is_lifecycle_taint, parse_reasons

PREEMPTION = " no new claims to deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."


def test_the_current_wording_counts_reasons_and_ignores_the_preemption_clause():
    message = "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient nvidia.com/gpu." + PREEMPTION
    assert parse_reasons(message) == (Reason(1, "node(s) had untolerated taint(s)"),
                                      Reason(2, "Insufficient nvidia.com/gpu", resource="nvidia.com/gpu"))


def test_the_older_taint_form_names_the_key():
    message = ("0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) had untolerated taint {dedicated: infra}. "
               "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.")
    reasons = parse_reasons(message)
    assert [r.count for r in reasons] == [1, 2] and reasons[1].taint_key == "dedicated" and reasons[1].is_taint
    lifecycle = parse_reasons("0/2 nodes are available: 2 node(s) had untolerated taint {node.kubernetes.io/unreachable: }.")
    assert is_lifecycle_taint(lifecycle[0].taint_key) and not is_lifecycle_taint("nvidia.com/gpu")


def test_a_message_of_another_shape_has_no_reasons():
    assert parse_reasons("running PreBind plugin \"VolumeBinding\": binding volumes: timed out") == ()
    assert parse_reasons("0/500 nodes are available: 400 Insufficient nvidia.com/mig-1g.10gb.")[0].resource == "nvidia.com/mig-1g.10gb"
