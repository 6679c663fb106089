"""matrices/doctor-signatures.toml: every row valid, sourced, reachable; bad rows fail loudly."""

from __future__ import annotations

import re

import pytest

from imagelint.errors import ConfigError
from imagelint.matrix.doctor_signatures import load_signatures, signatures_from_document


def test_shipped_signatures_load_and_every_row_has_words_and_a_source():
    sigs = load_signatures()
    assert len(sigs.signatures) >= 20
    for s in sigs.signatures:
        assert s.meaning.endswith(".") and s.fix.endswith("."), s.id
        assert len(s.source) > 10, s.id
        assert re.fullmatch(r"[a-z0-9-]+", s.id)


@pytest.mark.parametrize(
    ("line", "place", "component", "reason", "expected"),
    [
        ("E1201 factory.go:68] Failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND.", "log", "device-plugin", "", "nvml-init-failed"),
        # the specific driver row wins over the plugin's generic one (file order)
        ("Failed to initialize NVML: Driver/library version mismatch", "log", "device-plugin", "", "nvml-driver-library-mismatch"),
        ('failed to get sandbox runtime: no runtime for "nvidia" is configured', "event", "any", "FailedCreatePodSandBox", "runtime-handler-not-configured"),
        ("0/5 nodes are available: 5 Insufficient nvidia.com/gpu.", "event", "any", "FailedScheduling", "insufficient-gpu"),
        ("0/5 nodes are available: 5 node(s) didn't match Pod's node affinity/selector.", "event", "any", "FailedScheduling", "node-affinity-mismatch"),
        ("0/2 nodes are available: 2 node(s) had untolerated taint {nvidia.com/gpu: true}.", "event", "any", "FailedScheduling", "untolerated-taint"),
        # since 1.3x the taint key is no longer named; a lifecycle taint (older form) is the node's state
        ("0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient nvidia.com/gpu. no new claims to deallocate, "
         "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.", "event", "any", "FailedScheduling", "insufficient-gpu"),
        ("0/3 nodes are available: 3 node(s) had untolerated taint(s).", "event", "any", "FailedScheduling", "untolerated-taint"),
        ("0/3 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }.", "event", "any",
         "FailedScheduling", "node-lifecycle-taint"),
        ('could not select device driver "" with capabilities: [[gpu]]', "event", "any", "Failed", "could-not-select-device-driver"),
        ('Invalid value: "2": must be equal to nvidia.com/gpu limit of 1', "event", "any", "FailedCreate", "requests-not-equal-limits"),
        ('pods "x" is forbidden: pod rejected: RuntimeClass "nvidia" not found', "event", "any", "FailedCreate", "runtime-class-missing"),
    ],
)
def test_real_wording_matches_its_signature(line, place, component, reason, expected):
    row = load_signatures().first_match(line, place, component=component, reason=reason)
    assert row is not None and row.id == expected


def test_unrelated_lines_match_nothing():
    sigs = load_signatures()
    for line in ("I1201 main.go:246] Starting FS watcher.", "Registered device plugin for 'nvidia.com/gpu' with Kubelet",
                 "0/3 nodes are available: 3 node(s) had volume node affinity conflict."):
        assert sigs.first_match(line, "log", "device-plugin") is None
        assert sigs.first_match(line, "event", reason="FailedScheduling") is None
    # a scheduling row never matches another event reason
    assert sigs.first_match("5 Insufficient nvidia.com/gpu", "event", reason="FailedMount") is None


def _doc(**row):
    base = {"id": "x", "stage": 2, "in": ["log"], "pattern": "a", "meaning": "m.", "fix": "f.", "source": "somewhere real"}
    base.update(row)
    return {"schema": 1, "signature": [{k: v for k, v in base.items() if v is not None}]}


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"stage": 9}, "stage must be one of"),
        ({"in": ["journal"]}, "'in' must list"),
        ({"pattern": "("}, "not a valid regular expression"),
        ({"pattern": None}, "needs a pattern"),
        ({"source": None}, "'source' must be a non-empty string"),
        ({"fix": ""}, "'fix' must be a non-empty string"),
        ({"colour": "red"}, "unknown keys"),
        ({"component": "kubelet"}, "component must be one of"),
    ],
)
def test_bad_rows_are_config_errors(row, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        signatures_from_document(_doc(**row), "test.toml")


def test_duplicate_ids_and_wrong_schema_are_errors():
    doc = _doc()
    doc["signature"] *= 2
    with pytest.raises(ConfigError, match="duplicate signature ids"):
        signatures_from_document(doc, "t")
    with pytest.raises(ConfigError, match="schema must be 1"):
        signatures_from_document({"schema": 2}, "t")


def test_every_signature_the_doctor_code_names_exists():
    """The stages name rows by id: each must be in the file (a typo would be an internal error)."""
    import pathlib

    code = "\n".join(p.read_text() for p in pathlib.Path("imagelint/doctor").glob("*.py"))
    named = set(re.findall(r'finding\(\s*ctx,\s*"([a-z0-9-]+)"', code)) | set(re.findall(r'"([a-z0-9-]+)" if capacity else "([a-z0-9-]+)"', code)[0])
    ids = {s.id for s in load_signatures().signatures}
    assert named and named <= ids, named - ids
    settings = set(re.findall(r'_setting\(ctx, \w+, "([a-z-]+)"\)', code))
    assert settings and settings <= {s.id for s in load_signatures().settings}
