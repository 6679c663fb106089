"""The offline planner: ``audit --images FILE --target-file now.toml --plan next.toml``, no cluster;
the inventory round trip (``audit enumerate`` output as ``--images``); bad inputs as one line."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from tests.cli.test_check import imagelint, official_image

ROOT = Path(__file__).resolve().parents[2]
NOW = """
[[pool]]
name = "t4"
driver = "535.104.05"
gpus = ["T4"]
arch = "amd64"
"""
NEXT = NOW.replace("535.104.05", "470.182.03")


@pytest.fixture(scope="module")
def images_file(plain_registry, tmp_path_factory) -> tuple[Path, str, str]:
    work = tmp_path_factory.mktemp("audit-offline")
    plain_registry.push("offline/cuda122", "v1", official_image("12.2.2", "12.2.140", labels={"offline": "122"}))
    plain_registry.push("offline/cuda118", "v1", official_image("11.8.0", "11.8.89", labels={"offline": "118"}))
    a, b = f"{plain_registry.host}/offline/cuda122:v1", f"{plain_registry.host}/offline/cuda118:v1"
    path = work / "images.txt"
    path.write_text(f"# what runs\n{a}\n{b}  # legacy\n\n{a}\n")
    (work / "now.toml").write_text(NOW)
    (work / "next.toml").write_text(NEXT)
    return path, a, b


def _run(images: Path, host: str, *args: str):
    return imagelint("audit", "--images", str(images), "--target-file", str(images.parent / "now.toml"),
                     "--insecure-registry", host, *args)


def test_offline_plan_from_an_image_list(images_file, plain_registry) -> None:
    path, cuda122, cuda118 = images_file
    out = _run(path, plain_registry.host, "--plan", str(path.parent / "next.toml"), "--format", "json")
    assert out.returncode == 1, out.stderr  # the older driver breaks something
    plan = json.loads(out.stdout)
    by_image = {c["image"]: c for c in plan["changes"]}
    # before: pass or warn (IL503 warns that R535 is past end of life), never fail
    assert by_image[cuda122]["change"] == "breaks" and by_image[cuda122]["before"] in ("pass", "warn")
    assert any(r.startswith("IL101:") for r in by_image[cuda122]["reasons"])
    assert by_image[cuda118]["change"] == "unchanged"  # 11.8 on 470: minor-version compatible either way
    assert plan["summary"] == {"breaks": 1, "fixed": 0, "still-failing": 0, "unchanged": 1, "failing-today": 0}


def test_workloads_failing_today_and_on_the_plan_are_still_failing_and_counted(images_file, plain_registry) -> None:
    """On driver 418 both images (CUDA 12.2 and 11.8) fail; a plan that keeps 418 must say "still failing",
    count them as today's failures and exit 1, not "unchanged" and 0."""
    path, cuda122, _ = images_file
    old = path.parent / "old.toml"
    old.write_text(NOW.replace("535.104.05", "418.87.01"))
    out = imagelint("audit", "--images", str(path), "--target-file", str(old), "--insecure-registry", plain_registry.host,
                    "--plan", str(old))
    assert out.returncode == 1, out.stderr
    first = out.stdout.splitlines()[1]
    assert "2 failing today" in first and "2 still failing" in first and "0 unchanged" in first, out.stdout
    assert "Still failing:" in out.stdout and "because: IL101" in out.stdout


def test_audit_json_validates_against_the_published_schema(images_file, plain_registry) -> None:
    path, _, _ = images_file
    out = _run(path, plain_registry.host, "--format", "json")
    assert out.returncode == 0, out.stderr
    schema = json.loads((ROOT / "docs" / "audit-schema.json").read_text())
    jsonschema.validate(json.loads(out.stdout), schema)


def test_an_inventory_round_trips_through_images(images_file, plain_registry, tmp_path) -> None:
    path, _, _ = images_file
    first = _run(path, plain_registry.host, "--format", "json")
    report = json.loads(first.stdout)
    inventory = {"schema": "imagelint-audit-inventory/1", "source": str(path), "warnings": [],
                 "images": report["images"], "workloads": [{k: v for k, v in w.items() if k != "verdicts"} for w in report["workloads"]]}
    inv = path.parent / "inventory.json"
    inv.write_text(json.dumps(inventory))
    again = _run(inv, plain_registry.host, "--format", "json")
    assert again.returncode == 0 and json.loads(again.stdout)["checks"] == report["checks"]


@pytest.mark.parametrize("content, needle", [
    ('{"schema": "imagelint-audit-inventory/1", "workloads": 3}', "workloads is not a list"),
    ('{"schema": "something-else"}', "not an imagelint inventory"),
    ("{not json", "not valid JSON"),
])
def test_a_bad_images_file_is_one_line_exit_2(tmp_path, content, needle) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    (tmp_path / "now.toml").write_text(NOW)
    out = imagelint("audit", "--images", str(bad), "--target-file", str(tmp_path / "now.toml"))
    assert out.returncode == 2 and needle in out.stderr and len(out.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("args, needle", [
    (["--shard", "4/4"], "0..COUNT-1"),
    (["--shard", "x"], "INDEX/COUNT"),
    (["--format", "xml"], "--format"),
    (["--write-reports"], "needs --cluster"),
])
def test_bad_flags_are_usage_errors(images_file, plain_registry, args, needle) -> None:
    path, _, _ = images_file
    out = _run(path, plain_registry.host, *args)
    assert out.returncode == 2 and needle in out.stderr, out.stderr


def test_a_part_that_is_not_a_report_is_refused(tmp_path) -> None:
    part = tmp_path / "part.json"
    part.write_text('{"schema": "imagelint-audit/1", "shard": {"index": 0, "count": 1}, "target": {"pools": []}}')
    out = imagelint("audit", "merge", str(part))
    assert out.returncode == 2 and "is not a list" in out.stderr


def test_an_image_list_reports_as_one_valid_cluster_policy_report(images_file, plain_registry) -> None:
    import yaml

    from tests.audit.policyreport_schema import report_schema

    path, cuda122, cuda118 = images_file
    out = _run(path, plain_registry.host, "--format", "policyreport")
    docs = list(yaml.safe_load_all(out.stdout))
    assert [d["kind"] for d in docs] == ["ClusterPolicyReport"] and "namespace" not in docs[0]["metadata"]
    jsonschema.validate(docs[0], report_schema("ClusterPolicyReport"))
    assert {r["properties"]["image"] for r in docs[0]["results"]} == {cuda122, cuda118}
    assert not any("resources" in r for r in docs[0]["results"])  # an image is no Kubernetes object
    again = _run(path, plain_registry.host, "--format", "policyreport")
    assert again.stdout == out.stdout  # no timestamps: the same audit, the same objects


def test_an_inventory_pool_the_target_lacks_is_warned_and_not_counted(images_file, plain_registry) -> None:
    path, cuda122, _ = images_file
    inventory = {"schema": "imagelint-audit-inventory/1", "source": "cluster:prod", "warnings": [],
                 "images": [{"key": cuda122, "reference": f"registry:{cuda122}", "references": [cuda122]}],
                 "workloads": [{"namespace": "ml", "owner": {"kind": "Deployment", "name": "train"}, "container": "main",
                                "image": cuda122, "image_key": cuda122, "pools": ["t4", "gone-pool"],
                                "placement": "scheduling", "pods": 0}]}
    inv = path.parent / "inventory-gone.json"
    inv.write_text(json.dumps(inventory))
    out = _run(inv, plain_registry.host, "--format", "json")
    report = json.loads(out.stdout)
    assert out.returncode == 0 and report["workloads"][0]["pools"] == ["t4"]
    assert report["summary"]["error"] == 0
    assert any("gone-pool" in w and "not in the target" in w for w in report["warnings"])


def test_an_inventory_workload_without_its_image_is_not_checked_and_says_so(images_file, plain_registry) -> None:
    path, cuda122, _ = images_file
    inventory = {"schema": "imagelint-audit-inventory/1", "source": "cluster:prod", "warnings": [], "images": [],
                 "workloads": [{"namespace": "ml", "owner": {"kind": "Deployment", "name": "train"}, "container": "main",
                                "image": cuda122, "image_key": "sha256:" + "b" * 64, "pools": ["t4"],
                                "placement": "scheduling", "pods": 0}]}
    inv = path.parent / "inventory-orphan.json"
    inv.write_text(json.dumps(inventory))
    out = _run(inv, plain_registry.host, "--format", "json")
    report = json.loads(out.stdout)
    assert out.returncode == 3 and report["summary"]["error"] == 1
    assert report["checks"][0]["error"] == "the inventory lists no image for this key"


def test_il303_stays_for_an_image_a_gpu_less_container_runs_and_goes_where_every_container_asks_for_a_gpu(
        images_file, plain_registry) -> None:
    path, cuda122, _ = images_file

    def il303(*requests: bool) -> list[str]:
        workloads = [{"namespace": "ml", "owner": {"kind": "Deployment", "name": f"w{n}"}, "container": "main",
                      "image": cuda122, "image_key": cuda122, "pools": ["t4"], "placement": "scheduling", "pods": 0,
                      "requests_gpu": asks} for n, asks in enumerate(requests)]
        inv = path.parent / f"inventory-il303-{len(requests)}-{sum(requests)}.json"
        inv.write_text(json.dumps({"schema": "imagelint-audit-inventory/1", "source": "cluster:prod", "warnings": [],
                                   "images": [{"key": cuda122, "reference": f"registry:{cuda122}", "references": [cuda122]}],
                                   "workloads": workloads}))
        report = json.loads(_run(inv, plain_registry.host, "--format", "json").stdout)
        return [f["message"] for c in report["checks"] for f in c["findings"] if f["rule"] == "IL303"]

    assert il303(True, False)  # a sidecar that asks for no GPU runs it: it sees every GPU
    assert il303(True, True) == []
