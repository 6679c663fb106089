"""A driver and a CUDA version are parsed once where they are written and carried typed to the verdict."""

from __future__ import annotations

import pytest

from imagelint.errors import UsageError
from imagelint.matrix.versions import compare_versions
from imagelint.deploytarget import NodePool
from imagelint.deploytarget.options import TargetOptions, build_target
from imagelint.deploytarget.values import CudaVersion, DriverVersion, parse_driver_version

from tests.rules.helpers import matrix


def test_flags_give_pools_typed_versions() -> None:
    [pool] = build_target(TargetOptions(drivers=("R535",)), matrix()).pools
    assert isinstance(pool.driver, DriverVersion) and pool.driver.bare and pool.driver.branch == 535
    assert isinstance(pool.cuda_driver_version, CudaVersion) and pool.cuda_driver_version.major == 12


def test_text_given_directly_is_parsed_once_by_the_pool() -> None:
    pool = NodePool("p", driver="535.104.05", cuda_driver_version="12.2")
    assert pool.driver.parts == (535, 104, 5) and str(pool.driver) == "535.104.05"
    with pytest.raises(ValueError):
        NodePool("p", driver="not-a-driver")


def test_the_edge_refuses_what_is_not_a_driver_in_one_line() -> None:
    with pytest.raises(UsageError, match="--driver: 'latest' is not a driver version"):
        parse_driver_version("latest")


def test_compare_uses_the_parsed_parts_the_way_libnvidia_container_orders_them() -> None:
    d = DriverVersion("470.57.02")
    assert compare_versions(d, DriverVersion("470")) == 1 and compare_versions(d, DriverVersion("470.57.2")) == 0
    assert compare_versions(DriverVersion("535"), DriverVersion("535.54.03")) == -1
