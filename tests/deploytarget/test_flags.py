from __future__ import annotations

from types import SimpleNamespace

import pytest

from imagelint.errors import UsageError
from imagelint.deploytarget import GpuSpec, NodePool, Target
from imagelint.deploytarget.model import merge_targets
from imagelint.deploytarget.options import TargetOptions, build_target, target_from_flags


def flags(drivers=(), gpus=(), cc=None, brand=None, arch=None, toolkit=None, plugin=None, mode=None, matrix=None):
    return target_from_flags(drivers, gpus, cc, brand, arch, toolkit, plugin, mode, matrix)


def test_no_flags_is_no_target():
    target = flags()
    assert target == Target() and not target.known


def test_one_pool_per_driver_each_with_every_gpu_resolved_by_the_matrix(matrix):
    target = flags(["535.104.05", "550.54.15"], ["H100", "T4"], matrix=matrix, toolkit="v1.17.3", plugin="0.17.0")
    assert [p.driver for p in target.pools] == ["535.104.05", "550.54.15"]
    assert [p.cuda_driver_version for p in target.pools] == [
        matrix.cuda_for_driver("535.104.05"),
        matrix.cuda_for_driver("550.54.15"),
    ]
    assert target.pools[0].cuda_driver_version == "12.2" and target.pools[1].cuda_driver_version == "12.4"
    for pool in target.pools:
        h100, t4 = pool.gpus
        assert (h100.product, h100.compute_capability, h100.family) == ("H100", "9.0", matrix.gpu("H100").family)
        assert h100.brand == matrix.gpu("H100").brand
        assert (t4.compute_capability, t4.brand) == ("7.5", matrix.gpu("T4").brand)
        assert pool.toolkit == "1.17.3" and pool.device_plugin == "0.17.0" and pool.source == "flags"


def test_unknown_gpu_is_a_usage_error_with_close_names(matrix):
    with pytest.raises(UsageError) as info:
        flags(["535.104.05"], ["H10O"], matrix=matrix)
    message = info.value.message
    assert message.startswith("--gpu: unknown GPU 'H10O'") and "did you mean" in message and "H100" in message
    assert info.value.exit_code == 2


def test_unknown_gpu_with_explicit_compute_capability_is_accepted(matrix):
    target = flags(["580.65.06"], ["Future-GPU-X"], cc="12.1", brand="Nvidia", matrix=matrix)
    assert target.pools[0].gpus == (GpuSpec(product="Future-GPU-X", compute_capability="12.1", brand="Nvidia"),)


def test_compute_capability_and_brand_alone_describe_one_gpu():
    target = flags(["535.104.05"], cc="8.0", brand="Tesla", arch="aarch64", mode="cdi")
    pool = target.pools[0]
    assert pool.gpus == (GpuSpec(compute_capability="8.0", brand="Tesla"),)
    assert pool.arch == "arm64" and pool.runtime_mode == "cdi"
    assert pool.cuda_driver_version is None  # no matrix given: nothing derived


def test_flags_without_driver_give_one_pool_named_flags():
    target = flags(toolkit="1.16.2")
    assert [(p.name, p.driver, p.toolkit) for p in target.pools] == [("flags", None, "1.16.2")]


@pytest.mark.parametrize(
    "kwargs, expected",
    [
        ({"drivers": ["535.104.5.1"]}, "--driver: '535.104.5.1' is not a driver version; expected NNN[.NN[.NN]]"),
        ({"drivers": ["x535"]}, "--driver: 'x535' is not a driver version"),
        ({"drivers": ["12.2"]}, "--driver: '12.2' is not a driver version"),
        ({"cc": "nine"}, "--compute-capability: 'nine' is not a compute capability; expected MAJOR.MINOR"),
        ({"arch": "ppc64le"}, "--arch: 'ppc64le' is not a node architecture; expected one of amd64, arm64"),
        ({"toolkit": "latest"}, "--toolkit: 'latest' is not a release version; expected X.Y[.Z]"),
        ({"plugin": "0"}, "--device-plugin: '0' is not a release version"),
        ({"mode": "nvidia"}, "--runtime-mode: 'nvidia' is not a runtime mode; expected one of legacy, cdi, jit-cdi, csv"),
    ],
)
def test_bad_flag_values_name_the_flag_and_what_was_expected(kwargs, expected):
    with pytest.raises(UsageError) as info:
        flags(**kwargs)
    assert info.value.message.startswith(expected)
    assert "\n" not in info.value.message


def test_driver_versions_accepted():
    assert [p.driver for p in flags(["535", "535.104", "535.104.05", "535.104.05"]).pools] == ["535", "535.104", "535.104.05"]


def test_merge_keeps_every_pool_and_makes_names_unique():
    a = Target(pools=(NodePool(name="gpu"), NodePool(name="gpu-2")), runtime_classes=("nvidia",), source="file:a")
    b = Target(pools=(NodePool(name="gpu"),), runtime_classes=("nvidia", "nvidia-cdi"), source="flags", warnings=("w",))
    merged = merge_targets([a, Target(), b])
    assert [p.name for p in merged.pools] == ["gpu", "gpu-2", "gpu-3"]
    assert merged.runtime_classes == ("nvidia", "nvidia-cdi")
    assert merged.source == "file:a+flags" and merged.warnings == ("w",)


ONE_POOL = """
[[pool]]
name = "a100"
driver = "535.104.05"
toolkit = "1.14.0"
gpus = [{ product = "Some-GPU", compute-capability = "8.0" }]
"""

TWO_POOLS = ONE_POOL + """
[[pool]]
name = "t4"
driver = "550.54.15"
"""


def test_flags_override_the_single_file_pool(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text(ONE_POOL)
    target = build_target(TargetOptions(target_file=str(path), toolkit="1.18.0", brand="Nvidia"), None)
    (pool,) = target.pools
    assert (pool.name, pool.driver, pool.toolkit) == ("a100", "535.104.05", "1.18.0")
    assert pool.gpus == (GpuSpec(product="Some-GPU", compute_capability="8.0", brand="Nvidia"),)


def test_driver_flag_adds_a_pool_to_the_file_pools(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text(TWO_POOLS)
    target = build_target(TargetOptions(drivers=("570.124.06",), target_file=str(path), compute_capability="9.0"), None)
    assert [(p.name, p.driver, p.source.split(":")[0]) for p in target.pools] == [
        ("a100", "535.104.05", "file"),
        ("t4", "550.54.15", "file"),
        ("driver-570.124.06", "570.124.06", "flags"),
    ]
    assert target.pools[2].gpus == (GpuSpec(compute_capability="9.0"),)


def test_override_with_several_pools_is_ambiguous(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text(TWO_POOLS)
    with pytest.raises(UsageError, match=r"override a single pool, but the target has 2 pools \(a100, t4\)"):
        build_target(TargetOptions(target_file=str(path), toolkit="1.18.0"), None)


def test_cluster_options_reach_the_cluster_reader(tmp_path):
    seen = []

    def reader(context, kubeconfig, matrix):
        seen.append((context, kubeconfig, matrix))
        return Target(pools=(NodePool(name="c", driver="550.54.15", source="cluster:x"),), source="cluster:x")

    marker = SimpleNamespace()
    target = build_target(TargetOptions(cluster=True, context="prod", kubeconfig="kc", runtime_mode="legacy"), marker, reader)
    assert seen == [("prod", "kc", marker)]
    assert target.pools[0].runtime_mode == "legacy"


def test_context_without_cluster_is_a_usage_error():
    with pytest.raises(UsageError, match="need --cluster"):
        build_target(TargetOptions(context="prod"), None)


def test_options_fallback_lets_flags_beat_config():
    config = TargetOptions(drivers=("535.104.05",), toolkit="1.14.0", arch="amd64")
    cli = TargetOptions(toolkit="1.17.3")
    merged = cli.with_fallback(config)
    assert (merged.drivers, merged.toolkit, merged.arch) == (("535.104.05",), "1.17.3", "amd64")


def test_bare_branch_is_accepted_as_some_driver_of_that_branch():
    """``--driver 535`` / ``R535``: "some 535.x" (the compatibility model judges it as the oldest)."""
    from tests.rules.helpers import matrix

    for text in ("535", "R535", "r535"):
        [p] = flags([text], matrix=matrix()).pools
        assert p.driver == "535" and p.cuda_driver_version == "12.2"
    [beyond] = flags(["999.1"], matrix=matrix()).pools
    assert beyond.cuda_driver_version is None  # newer than every branch the matrix knows: no CUDA is made up
