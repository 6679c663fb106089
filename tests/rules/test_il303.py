"""IL303: cases that fire and cases that must not."""

from __future__ import annotations

from tests.rules.helpers import facts, of, pool, run, target


def test_all_without_target_is_info():
    [f] = of(run(facts({"NVIDIA_VISIBLE_DEVICES": "all"})), "IL303")
    assert f.severity == "info" and "envvar" in f.text


def test_all_on_envvar_pool_is_warning():
    t = target(pool(device_list_strategy=("envvar",)))
    [f] = of(run(facts({"NVIDIA_VISIBLE_DEVICES": "all"}), t), "IL303")
    assert f.severity == "warning" and f.pool == "p"


def test_all_on_safe_pool_is_info_only():
    t = target(pool(device_list_strategy=("volume-mounts",)), pool("q", device_list_strategy=("envvar",), accept_envvar_unprivileged=False))
    [f] = of(run(facts({"NVIDIA_VISIBLE_DEVICES": "all"}), t), "IL303")
    assert f.severity == "info" and f.pool is None


def test_not_all_is_silent():
    assert not of(run(facts({"NVIDIA_VISIBLE_DEVICES": "void"})), "IL303")
