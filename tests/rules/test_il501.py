"""IL501: cases that fire and cases that must not."""

from __future__ import annotations

from tests.rules.helpers import facts, of, pool, run, target


def test_device_plugin_needs_newer_toolkit():
    [f] = of(run(facts({}), target(pool(device_plugin="0.14.0", toolkit="1.6.0"))), "IL501")
    assert "1.7.0" in f.message and f.severity == "error"


def test_device_plugin_strategy_unknown_to_release():
    [f] = of(run(facts({}), target(pool(device_plugin="0.14.0", toolkit="1.14.0", device_list_strategy=("cdi-cri",)))), "IL501")
    assert "cdi-cri" in f.message


def test_device_plugin_fine_and_unknown_version():
    assert not of(run(facts({}), target(pool(device_plugin="0.15.0", toolkit="1.14.0", device_list_strategy=("cdi-cri",)))), "IL501")
    [info] = of(run(facts({}), target(pool(device_plugin="9.9.9"))), "IL501")
    assert info.severity == "info"
