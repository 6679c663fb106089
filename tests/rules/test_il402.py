"""IL402: cases that fire and cases that must not."""

from __future__ import annotations

from imagelint.image import Platform

from tests.rules.helpers import facts, of, pool, run, target


def test_arm64_pool_amd64_image():
    [f] = of(run(facts({}), target(pool(arch="arm64"))), "IL402")
    assert f.severity == "error" and "linux/amd64" in f.message and f.pool == "p"


def test_multi_platform_image_matches():
    f = facts({}, platforms=(Platform("linux", "amd64"), Platform("linux", "arm64", "v8")))
    assert not of(run(f, target(pool(arch="arm64"), pool("x", arch="amd64"))), "IL402")


def test_static_inputs_have_no_platform():
    assert not of(run(facts({}, kind="dockerfile", platforms=()), target(pool(arch="arm64"))), "IL402")
