"""doctor's CLI contract: exit codes, JSON that follows docs/doctor-schema.json, no credentials, --pod / --namespace."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
from typer.testing import CliRunner

from tests.doctor.clusters import clone, event, healthy_state, pod
from tests.doctor.conftest import TOKEN
from tests.support.fakekube import dead_url

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs" / "doctor-schema.json").read_text())


def _invoke(*args: str):
    from imagelint.cli import app

    return CliRunner().invoke(app, ["doctor", *args])


def test_json_report_follows_the_schema_healthy_and_failing(run_doctor):
    state = clone(healthy_state())
    run = run_doctor(state, "--format", "json")
    assert run.exit_code == 0
    jsonschema.Draft202012Validator(SCHEMA).validate(run.json)
    assert run.json["healthy"] is True and [s["status"] for s in run.json["stages"]] == ["ok"] * 6
    state.pods.append(pod("ml", "p", node=None, phase="Pending", nodeSelector={"hardware-type": "ai-trainng"}))
    run = run_doctor(state, "--format", "json", kube=run.kube)
    assert run.exit_code == 1
    jsonschema.Draft202012Validator(SCHEMA).validate(run.json)
    assert run.json["stages"][3]["status"] == "failed"


def test_without_cluster_flag_reads_the_kubeconfig_current_context(tmp_path):
    """As kubectl: no --cluster and no --from is the live cluster of KUBECONFIG's current context."""
    from imagelint.cli import app
    from tests.support.fakekube import FakeKube

    kube = FakeKube(healthy_state(), tmp_path, TOKEN).start()
    try:
        config = kube.write_kubeconfig(tmp_path / "kubeconfig")
        result = CliRunner().invoke(app, ["doctor", "--format", "json"], env={"KUBECONFIG": str(config)})
        assert result.exit_code == 0, result.stdout + result.stderr
        assert json.loads(result.stdout)["healthy"] is True
        assert "/api/v1/nodes" in kube.requests
        both = _invoke("--from", str(tmp_path), "--cluster")
        assert both.exit_code == 2 and "--from reads a dump" in both.stderr
    finally:
        kube.stop()


def test_bad_format_is_usage_error(tmp_path):
    result = _invoke("--cluster", "--format", "yaml", "--kubeconfig", str(tmp_path / "nope"))
    assert result.exit_code == 2


def test_unreachable_cluster_exits_3_in_one_line(tmp_path):
    doc = {"apiVersion": "v1", "kind": "Config", "clusters": [{"name": "c", "cluster": {"server": dead_url(), "insecure-skip-tls-verify": True}}],
           "users": [{"name": "u", "user": {"token": TOKEN}}], "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
           "current-context": "x"}
    config = tmp_path / "kc"
    config.write_text(json.dumps(doc))
    result = _invoke("--cluster", "--kubeconfig", str(config))
    assert result.exit_code == 3
    assert result.stderr.count("\n") == 1 and "connection refused" in result.stderr
    assert TOKEN not in result.stderr + result.stdout


def test_wrong_token_exits_3_without_printing_it(run_doctor, tmp_path):
    run = run_doctor(healthy_state())
    config = run.kube.write_kubeconfig(tmp_path / "bad", token="wrong-token-abcdef-123456")
    result = _invoke("--cluster", "--kubeconfig", str(config))
    assert result.exit_code == 3 and "401" in result.stderr
    assert "wrong-token-abcdef-123456" not in result.stderr + result.stdout


def test_pod_and_namespace_narrow_the_affected_pods(run_doctor):
    state = clone(healthy_state())
    state.pods.append(pod("ml", "a", node=None, phase="Pending", nodeSelector={"hardware-type": "ai-trainng"}))
    state.pods.append(pod("other", "b", node=None, phase="Pending", nodeSelector={"zone": "nowhere"}))
    run = run_doctor(state, "--namespace", "ml")
    assert run.exit_code == 1 and "pod ml/a" in run.output and "other/b" not in run.output
    run = run_doctor(state, "--namespace", "other", "--pod", "b", kube=run.kube)
    assert "pod other/b" in run.output and "ml/a" not in run.output
    run = run_doctor(state, "--namespace", "ml", "--pod", "nope", kube=run.kube)
    assert run.exit_code == 2 and "no pod nope in namespace ml" in run.stderr


def test_hostile_strings_from_the_cluster_are_printed_escaped(run_doctor):
    state = clone(healthy_state())
    state.pods.append(pod("ml", "evil", node=None, phase="Pending", gpus=1))
    state.events.append(event("ml", "Pod", "evil", "FailedScheduling",
                              "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.\x1b]0;pwned\x07\x1b[2J"))
    run = run_doctor(state)
    assert "\x1b" not in run.output and "\x07" not in run.output


def test_malformed_objects_are_skipped_not_a_traceback(run_doctor):
    state = clone(healthy_state())
    state.pods.append({"metadata": {"name": 7, "namespace": ["x"]}, "spec": "nope", "status": {"phase": {"a": 1}}})
    state.nodes.append({"metadata": {"name": "weird", "labels": {"a": 1, "nvidia.com/gpu.present": "true"}},
                        "status": {"allocatable": ["x"], "conditions": "bad"}, "spec": {"taints": "bad"}})
    state.events.append({"type": "Warning", "reason": ["x"], "involvedObject": "no"})
    run = run_doctor(state)
    assert run.exit_code in (0, 1), run.output + run.stderr
    assert run.lines[0].startswith("imagelint doctor:")


def test_many_pods_with_the_same_problem_read_as_one_entry_in_text(run_doctor):
    state = clone(healthy_state())
    for i in range(30):
        state.pods.append(pod("ml", f"sweep-{i:02d}", node=None, phase="Pending", nodeSelector={"hardware-type": "ai-trainng"}))
    run = run_doctor(state)
    block = [line for line in run.lines if line.startswith("  pod ml/sweep-")]
    assert len(block) == 1
    assert "also 29 other pod(s) with the same problem: ml/sweep-01, ml/sweep-02" in run.output and "and 24 more" in run.output
    data = run_doctor(state, "--format", "json", kube=run.kube).json
    assert len(data["stages"][3]["findings"]) == 30  # JSON keeps every pod
