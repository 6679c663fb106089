from __future__ import annotations

import dataclasses

import pytest

from imagelint.errors import ConfigError
from imagelint.deploytarget import GpuSpec, NodePool, Taint
from imagelint.deploytarget.file import load_target_file, parse_target_text
from imagelint.deploytarget.toml_writer import dump_target_toml

GOOD = """\
runtime-classes = ["nvidia", "nvidia-cdi"]

[[pool]]
name = "t4"
driver = "535.104.05"
gpus = ["T4", { product = "H100", count = 8, mig-profiles = ["1g.10gb"] }, { product = "Lab-GPU", compute-capability = "8.6", brand = "GeForce" }]
arch = "arm64"
toolkit = "v1.17.3"
runtime-mode = "jit-cdi"
device-plugin = "0.17.0"
device-list-strategy = "volume-mounts,cdi-cri"
mig-strategy = "mixed"
resources = { "nvidia.com/gpu" = 4 }
taints = [{ key = "nvidia.com/gpu", value = "present", effect = "NoExecute" }, { key = "dedicated" }]
runtime-class = "nvidia"
node-count = 3

[pool.labels]
"nvidia.com/gpu.product" = "Tesla-T4"

[[pool]]
name = "h100"
driver = "550.54.15"
"""


def write(tmp_path, text):
    path = tmp_path / "target.toml"
    path.write_text(text)
    return str(path)


def test_target_file_reads_every_field(tmp_path, matrix):
    path = write(tmp_path, GOOD)
    target = load_target_file(path, matrix)
    t4, h100 = target.pools
    assert target.runtime_classes == ("nvidia", "nvidia-cdi") and target.source == f"file:{path}"
    assert (t4.name, t4.driver, t4.cuda_driver_version) == ("t4", "535.104.05", "12.2")
    assert t4.gpus[0] == GpuSpec(product="T4", compute_capability="7.5", brand=matrix.gpu("T4").brand, family="turing")
    assert t4.gpus[1].count == 8 and t4.gpus[1].mig_profiles == ("1g.10gb",) and t4.gpus[1].compute_capability == "9.0"
    assert t4.gpus[2] == GpuSpec(product="Lab-GPU", compute_capability="8.6", brand="GeForce")
    assert (t4.arch, t4.toolkit, t4.runtime_mode, t4.device_plugin) == ("arm64", "1.17.3", "jit-cdi", "0.17.0")
    assert t4.device_list_strategy == ("volume-mounts", "cdi-cri") and t4.mig_strategy == "mixed"
    assert dict(t4.resources) == {"nvidia.com/gpu": 4}
    assert t4.taints == (Taint("nvidia.com/gpu", "present", "NoExecute"), Taint("dedicated", None, "NoSchedule"))
    assert dict(t4.labels) == {"nvidia.com/gpu.product": "Tesla-T4"}
    assert (t4.runtime_class, t4.node_count) == ("nvidia", 3)
    assert (h100.name, h100.cuda_driver_version, h100.gpus, h100.node_count) == ("h100", "12.4", (), None)  # not said: not 1


def test_dump_round_trips(tmp_path, matrix):
    first = load_target_file(write(tmp_path, GOOD), matrix)
    text = dump_target_toml(first)
    second = parse_target_text(text, "again.toml", matrix)
    strip = lambda t: [dataclasses.replace(p, source="") for p in t.pools]  # noqa: E731
    assert strip(second) == strip(first)
    assert second.runtime_classes == first.runtime_classes
    assert dump_target_toml(dataclasses.replace(second, source=first.source)) == text


def test_dump_round_trips_awkward_strings(tmp_path):
    pool = NodePool(
        name='odd "name" \\ ü',
        driver="535",
        accept_envvar_unprivileged=True,
        labels={"a.b/c d": 'quote " and \\ back\nline'},
        gpus=(GpuSpec(product="X", compute_capability="1.0", count=0),),
    )
    from imagelint.deploytarget import Target

    again = parse_target_text(dump_target_toml(Target(pools=(pool,))), "x.toml", None)
    assert dataclasses.replace(again.pools[0], source="flags") == pool


BAD_CASES = [
    # (text, line, message fragment)
    ("colour = 1\n[[pool]]\nname = 'a'\n", 1, "unknown key 'colour'; expected runtime-classes, pool, snapshot-of at the top level"),
    ("[[pool]]\nname = 'a'\n\n[[pool]]\nname = 'b'\ndrvier = '535'\n", 6, "pool 2: unknown key 'drvier'; expected one of name, driver"),
    ("[[pool]]\nname = 'a'\ndriver = '535.104.05.7'\n", 3, "pool 1: driver: '535.104.05.7' is not a driver version; expected NNN[.NN[.NN]]"),
    ("[[pool]]\nname = 'a'\ndriver = 535\n", 3, "pool 1: driver must be a string, not an integer"),
    ("[[pool]]\nname = 'a'\n\n\ntoolkit = 'main'\n", 5, "pool 1: toolkit: 'main' is not a release version"),
    ("[[pool]]\narch = 's390x'\n", 2, "pool 1: arch: 's390x' is not a node architecture"),
    ("[[pool]]\nruntime-mode = 'magic'\n", 2, "pool 1: runtime-mode: 'magic' is not a runtime mode"),
    ("[[pool]]\nmig-strategy = 'some'\n", 2, "pool 1: mig-strategy: 'some' is not valid; expected one of none, single, mixed"),
    ("[[pool]]\ndevice-list-strategy = ['envvar', 'magic']\n", 2, "device-list-strategy 'magic' is not valid"),
    ("[[pool]]\nnode-count = 0\n", 2, "pool 1: node-count must be a whole number >= 1, not 0"),
    ("[[pool]]\nnode-count = true\n", 2, "node-count must be a whole number >= 1, not True"),
    ("[[pool]]\nname='a'\ngpus = 'T4'\n", 3, "pool 1: gpus must be a list of GPU names or tables, not a string"),
    ("[[pool]]\nname='a'\ngpus = ['H10O']\n", 3, "pool 1: gpus[0]: unknown GPU 'H10O'; did you mean"),
    ("[[pool]]\ngpus = [{ product = 'T4', cores = 2 }]\n", 2, "gpus[0]: unknown key 'cores'"),
    ("[[pool]]\ngpus = [{ compute-capability = 'nine' }]\n", 2, "gpus[0]: compute-capability 'nine' is not MAJOR.MINOR"),
    ("[[pool]]\ngpus = [{ product = 'T4', count = -1 }]\n", 2, "gpus[0]: count must be a whole number >= 0"),
    ("[[pool]]\ntaints = [{ key = 'k', effect = 'Sometimes' }]\n", 2, "taints[0]: effect 'Sometimes' is not valid"),
    ("[[pool]]\ntaints = [{ value = 'v' }]\n", 2, "taints[0]: 'key' must be a non-empty string"),
    ("[[pool]]\nname = 'a'\n[pool.resources]\n'nvidia.com/gpu' = 'four'\n", 3, "pool 1: resources: 'nvidia.com/gpu' must be a whole number >= 0"),
    ("[[pool]]\nname = 'a'\n[pool.labels]\nx = 1\n", 3, "pool 1: labels must be a table of name = \"value\" strings"),
    ("[[pool]]\naccept-envvar-unprivileged = 'no'\n", 2, "accept-envvar-unprivileged must be true or false, not a string"),
    ("[[pool]]\ncuda-driver-version = '12'\n", 2, "cuda-driver-version: '12' is not a CUDA version"),
    ("[[pool]]\nname = 'a'\n[[pool]]\nname = 'a'\n", 4, "pool name 'a' is used twice"),
    ("runtime-classes = 'nvidia'\n", 1, "runtime-classes must be a list of strings"),
    ("pool = 3\n", 1, "'pool' must be an array of tables"),
    ("[[pool]]\nname = 'a\n", 2, "not valid TOML"),
]


@pytest.mark.parametrize("text, line, fragment", BAD_CASES)
def test_bad_target_file_gives_path_line_and_expectation(tmp_path, matrix, text, line, fragment):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_target_file(path, matrix)
    error = info.value
    assert (error.path, error.line) == (path, line), error.message
    assert error.message.startswith(f"{path}:{line}: ")
    assert fragment in error.message
    assert error.exit_code == 2 and "\n" not in error.message


def test_missing_target_file(tmp_path):
    with pytest.raises(ConfigError, match="cannot read target file"):
        load_target_file(str(tmp_path / "nope.toml"), None)
