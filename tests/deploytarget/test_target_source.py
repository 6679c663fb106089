"""The target says where it came from (issue 38): pools from ``.imagelint.toml``'s ``[target]`` name
that file, in ``target show`` and in the JSON report, and no pool claims a node count nobody gave."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path


def imagelint(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env.update({"IMAGELINT_NO_CACHE": "1", "NO_COLOR": "1"})
    return subprocess.run(["imagelint", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_a_target_from_the_config_file_names_it(tmp_path):
    config = tmp_path / ".imagelint.toml"
    config.write_text('[target]\ndriver = ["535.104.05"]\ngpus = ["T4"]\n')
    (tmp_path / "train.py").write_text("import torch\ntorch.cuda.set_device(1)\n")
    show = imagelint(tmp_path, "target", "show")
    assert show.returncode == 0, show.stderr
    assert f"target from config:{config}: 1 pool(s)" in show.stdout and "flags" not in show.stdout, show.stdout
    lint = imagelint(tmp_path, "lint", "train.py", "--format", "json")
    assert json.loads(lint.stdout)["results"][0]["target"]["source"] == f"config:{config}"
    # a flag that names pools replaces the config's target: then it is the flags'
    assert "target from flags" in imagelint(tmp_path, "target", "show", "--driver", "550.54.15").stdout
    # a flag that adjusts the config's pools: both are named
    assert f"target from config:{config} with flags" in imagelint(tmp_path, "target", "show", "--gpu", "A10").stdout


def test_pools_without_a_node_count_claim_none(tmp_path):
    out = imagelint(tmp_path, "target", "show", "--driver", "535.104.05").stdout
    assert "pool driver-535.104.05 (flags)" in out and "1 node" not in out, out
    target = tmp_path / "pools.toml"
    target.write_text('[[pool]]\nname = "t4"\ndriver = "535.104.05"\nnode-count = 3\n[[pool]]\nname = "a10"\ndriver = "550.54.15"\n')
    out = imagelint(tmp_path, "target", "show", "--target-file", str(target)).stdout
    assert f"pool t4 (3 nodes, file:{target})" in out or "pool t4 (3 nodes, file:" in out, out
    assert "pool a10 (file:" in out and "a10 (1 node" not in out, out
