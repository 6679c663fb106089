"""One precedence for the target: command line > target file > config. A `--target-file` replaces
the config's `[target]` as `--driver` does, and `target show` shows what check/lint use."""

from __future__ import annotations

import json
from pathlib import Path

from imagelint.deploytarget.options import TargetOptions
from tests.cli.test_check import imagelint

CONFIG = '[target]\ndriver = ["535.104.05"]\n'
POOLS = '[[pool]]\nname = "h100"\ndriver = "570.124.06"\ngpus = ["H100"]\n'
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: c
    image: nvidia/cuda:12.4.1-base-ubuntu22.04
    resources:
      limits: {nvidia.com/gpu: 1}
"""


def _repo(tmp_path: Path) -> Path:
    (tmp_path / ".imagelint.toml").write_text(CONFIG)
    (tmp_path / "pools.toml").write_text(POOLS)
    (tmp_path / "pod.yaml").write_text(POD)
    return tmp_path


def test_target_file_on_the_command_line_replaces_the_configs_target(tmp_path):
    repo = _repo(tmp_path)
    out = imagelint("lint", "pod.yaml", "--target-file", "pools.toml", "--format", "json", cwd=repo)
    pools = {f["pool"] for r in json.loads(out.stdout)["results"] for f in r["findings"] if f["pool"]}
    assert pools == {"h100"}, out.stdout  # not driver-535.104.05 from the config as well
    config_only = imagelint("lint", "pod.yaml", "--format", "json", cwd=repo)
    assert {f["pool"] for r in json.loads(config_only.stdout)["results"] for f in r["findings"] if f["pool"]} == {
        "driver-535.104.05"}


def test_target_show_shows_the_effective_target_of_config_and_flags(tmp_path):
    repo = _repo(tmp_path)
    shown = imagelint("target", "show", cwd=repo)
    assert shown.returncode == 0 and "535.104.05" in shown.stdout
    replaced = imagelint("target", "show", "--target-file", "pools.toml", cwd=repo)
    assert "h100" in replaced.stdout and "535.104.05" not in replaced.stdout


def test_adjusting_flags_still_fall_back_to_the_config_field_by_field():
    config = TargetOptions(drivers=("535.104.05",), toolkit="1.17.3")
    assert TargetOptions(gpus=("T4",)).with_fallback(config) == TargetOptions(
        drivers=("535.104.05",), gpus=("T4",), toolkit="1.17.3")
    assert TargetOptions(target_file="pools.toml").with_fallback(config) == TargetOptions(target_file="pools.toml")


def test_a_snapshot_of_a_cluster_has_complete_labels_a_hand_written_file_does_not(tmp_path):
    """IL604 judges a label a pool lacks only when the pools are the cluster's (live or a snapshot file)."""
    import textwrap

    (tmp_path / "ds.yaml").write_text(textwrap.dedent("""\
        apiVersion: apps/v1
        kind: DaemonSet
        metadata: {name: burn}
        spec:
          template:
            spec:
              nodeSelector: {nvidia.com/gpu.deploy.driver: "true"}
              containers:
              - {name: c, image: busybox, resources: {limits: {nvidia.com/gpu: 1}}}
        """))
    pools = '[[pool]]\nname = "t4"\ndriver = "550.54.15"\nlabels = { "nvidia.com/gpu.product" = "Tesla-T4" }\n'
    (tmp_path / "hand.toml").write_text(pools)
    (tmp_path / "snap.toml").write_text('snapshot-of = "cluster:prod"\n' + pools)
    # hand-written: the label is undescribed, said as an info (issue 37); a snapshot: certain
    for name, severities in (("hand.toml", ["info"]), ("snap.toml", ["error"])):
        out = imagelint("lint", "ds.yaml", "--target-file", name, "--select", "IL604", "--format", "json", cwd=tmp_path)
        hits = [f["severity"] for r in json.loads(out.stdout)["results"] for f in r["findings"]]
        assert hits == severities, (name, out.stdout)


def test_target_snapshot_of_a_cluster_says_so_and_reads_back(tmp_path):
    from types import MappingProxyType

    from imagelint.deploytarget import NodePool, Target
    from imagelint.deploytarget.file import load_target_file
    from imagelint.deploytarget.toml_writer import dump_target_toml

    pool = NodePool(name="t4", driver="550.54.15", labels=MappingProxyType({"a": "b"}), source="cluster:prod")
    text = dump_target_toml(Target(pools=(pool,), source="cluster:prod"))
    assert 'snapshot-of = "cluster:prod"' in text
    (tmp_path / "snap.toml").write_text(text)
    loaded = load_target_file(str(tmp_path / "snap.toml"), None)
    assert loaded.source.endswith("(snapshot of cluster:prod)") and loaded.pools[0].labels == pool.labels
