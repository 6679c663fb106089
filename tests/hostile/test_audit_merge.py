"""``audit merge`` takes parts another job wrote: it refuses a part whose verdict its own findings
contradict, a part holding an image of another shard, and parts cut from two inventories
(exit 2, one line). What a consistent forgery (a finding dropped with its verdict) does is out of
reach without signed parts: docs/robustness.md says so."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from imagelint.audit.jsonout import render_json
from imagelint.audit.model import ERROR, AuditImage, AuditReport, FindingLine, Inventory, PoolCheck, Workload, verdict_of
from imagelint.audit.shard import inventory_digest, shard_of
from tests.hostile.cli import assert_usage, run_main

COUNT = 2
FAILING = (FindingLine("IL101", "error", "needs driver 550 or newer"),)
WARNING = (FindingLine("IL302", "warning", "CUDA_VISIBLE_DEVICES set in the image"),)


def _inventory(extra: int = 0) -> Inventory:
    keys = [f"sha256:{n:064x}" for n in range(8 + extra)]
    workloads = tuple(Workload("ml", "Deployment", f"app{n}", "main", f"reg.example/app{n}@{k}", k, ("pool-a",),
                               "every pool", 1) for n, k in enumerate(keys))
    images = tuple(AuditImage(k, f"reg.example/app{n}@{k}", (f"reg.example/app{n}@{k}",)) for n, k in enumerate(keys))
    return Inventory(workloads, images, "images.txt")


def _report(inventory: Inventory, shard: tuple[int, int] | None) -> AuditReport:
    def mine(key: str) -> bool:
        return shard is None or shard_of(key, shard[1]) == shard[0]

    checks = []
    for n, image in enumerate(inventory.images):
        if not mine(image.key):
            continue
        if n % 4 == 3:
            checks.append(PoolCheck(image.key, "pool-a", ERROR, error="HTTP 403 from reg.example"))
            continue
        findings = FAILING if n % 4 == 0 else WARNING if n % 4 == 1 else ()
        checks.append(PoolCheck(image.key, "pool-a", verdict_of([f.severity for f in findings], "error"), findings))
    return AuditReport(
        workloads=tuple(w for w in inventory.workloads if mine(w.image_key)),
        images=tuple(i for i in inventory.images if mine(i.key)),
        checks=tuple(checks), target_source="target.toml", pools=("pool-a",), matrix_version="2026-11-29",
        fail_on="error", tool_version="0.1.0", source=inventory.source, shard=shard,
        inventory_digest=inventory_digest(inventory),
    )


def _write(tmp_path: Path, name: str, report: AuditReport | dict) -> str:
    path = tmp_path / name
    path.write_text(render_json(report) if isinstance(report, AuditReport) else json.dumps(report))
    return str(path)


def _parts(tmp_path: Path, inventory: Inventory | None = None) -> list[AuditReport]:
    inventory = inventory or _inventory()
    return [_report(inventory, (i, COUNT)) for i in range(COUNT)]


def test_genuine_parts_merge_into_the_unsharded_report(tmp_path):
    names = [_write(tmp_path, f"part{i}.json", p) for i, p in enumerate(_parts(tmp_path))]
    run = run_main("audit", "merge", *names, "--format", "json")
    assert run.returncode == 3, run.stderr  # an unreadable image: a partial audit never passes
    assert json.loads(run.stdout) == json.loads(render_json(_report(_inventory(), None)))


def test_a_part_that_says_pass_beside_its_own_error_finding_is_refused(tmp_path):
    parts = _parts(tmp_path)
    forged = json.loads(render_json(parts[0]))
    check = next(c for c in forged["checks"] if c["findings"] and c["findings"][0]["severity"] == "error")
    check["verdict"] = "pass"
    names = [_write(tmp_path, "part0.json", forged), _write(tmp_path, "part1.json", parts[1])]
    run = run_main("audit", "merge", *names)
    assert_usage(run, "part0.json", f"{check['image_key']} on pool pool-a says pass, but its findings make it fail")


@pytest.mark.parametrize("kind", ["unreadable", "warning"])
def test_other_verdicts_their_findings_contradict_are_refused(tmp_path, kind):
    """An unreadable image (its error) or a warning turned into a pass."""
    docs = [json.loads(render_json(p)) for p in _parts(tmp_path)]

    def forgeable(check: dict) -> bool:
        return bool(check["error"]) if kind == "unreadable" else [f["severity"] for f in check["findings"]] == ["warning"]

    index, check = next((i, c) for i, d in enumerate(docs) for c in d["checks"] if forgeable(c))
    check["verdict"] = "pass"
    names = [_write(tmp_path, f"part{i}.json", d) for i, d in enumerate(docs)]
    run = run_main("audit", "merge", *names)
    assert_usage(run, f"part{index}.json", f"{check['image_key']} on pool pool-a says pass, but its findings make it")


def test_an_image_in_the_wrong_shard_is_refused(tmp_path):
    inventory = _inventory()
    parts = _parts(tmp_path, inventory)
    stray = next(i for i in inventory.images if shard_of(i.key, COUNT) == 1)
    moved = replace(parts[0], images=(*parts[0].images, stray),
                    checks=(*parts[0].checks, PoolCheck(stray.key, "pool-a", "pass")))
    names = [_write(tmp_path, "part0.json", moved), _write(tmp_path, "part1.json", parts[1])]
    run = run_main("audit", "merge", *names)
    assert_usage(run, "part0.json", f"image {stray.key} belongs to shard 1/2, not 0/2")


def test_parts_cut_from_two_inventories_are_refused(tmp_path):
    # The same images file path on two runs, its content changed between them.
    one, two = _parts(tmp_path, _inventory()), _parts(tmp_path, _inventory(extra=3))
    assert one[0].source == two[1].source
    names = [_write(tmp_path, "part0.json", one[0]), _write(tmp_path, "part1.json", two[1])]
    run = run_main("audit", "merge", *names)
    assert_usage(run, "part1.json was cut from another inventory than", "part0.json")


def test_a_part_without_an_inventory_fingerprint_is_refused(tmp_path):
    parts = _parts(tmp_path)
    bare = json.loads(render_json(parts[1]))
    bare["inventory"] = None
    names = [_write(tmp_path, "part0.json", parts[0]), _write(tmp_path, "part1.json", bare)]
    run = run_main("audit", "merge", *names)
    assert_usage(run, "part1.json carries no inventory fingerprint")


def test_a_severity_that_is_none_is_one_line_not_a_traceback(tmp_path):
    parts = _parts(tmp_path)
    odd = json.loads(render_json(parts[0]))
    next(c for c in odd["checks"] if c["findings"])["findings"][0]["severity"] = "catastrophic"
    names = [_write(tmp_path, "part0.json", odd), _write(tmp_path, "part1.json", parts[1])]
    run = run_main("audit", "merge", *names)
    assert_usage(run, "part0.json", "a severity or fail-on level that is not one")


def test_a_merged_report_to_a_fifo_is_refused_before_merging(tmp_path):
    import os

    names = [_write(tmp_path, f"part{i}.json", p) for i, p in enumerate(_parts(tmp_path))]
    fifo = tmp_path / "merged.json"
    os.mkfifo(fifo)
    run = run_main("audit", "merge", *names, "--format", "json", "--output", str(fifo))
    assert run.returncode == 4 and "not a regular file" in run.error_line(), run.stderr
