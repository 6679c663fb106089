"""The GPU variables' effective values (imagelint.facts.gpuenv): the toolkit's semantics, case by case."""

from __future__ import annotations

import pytest

from imagelint.facts.gpuenv import driver_capabilities, nvidia_visible_devices, pins_devices
from tests.rules.helpers import facts

LEGACY = {"CUDA_VERSION": "11.0.3"}  # CUDA_VERSION set, NVIDIA_REQUIRE_CUDA unset
MODERN = {"CUDA_VERSION": "12.4.1", "NVIDIA_REQUIRE_CUDA": "cuda>=12.4"}


@pytest.mark.parametrize(
    ("env", "how", "capabilities", "every"),
    [
        ({**MODERN, "NVIDIA_DRIVER_CAPABILITIES": "compute,Utility,video"}, "set", ("compute", "utility", "video"), False),
        ({**MODERN, "NVIDIA_DRIVER_CAPABILITIES": "all"}, "set", ("all",), True),
        ({**MODERN, "NVIDIA_DRIVER_CAPABILITIES": ""}, "empty", ("compute", "utility"), False),
        (MODERN, "unset", ("compute", "utility"), False),
        (LEGACY, "legacy", (), True),  # unset in a legacy image: every capability
        ({**LEGACY, "NVIDIA_REQUIRE_CUDA": ""}, "legacy", (), True),  # an empty requirement counts as unset
        ({**LEGACY, "NVIDIA_DRIVER_CAPABILITIES": ""}, "empty", ("compute", "utility"), False),  # set, even empty
    ],
)
def test_driver_capabilities(env, how, capabilities, every):
    caps = driver_capabilities(facts(env))
    assert (caps.how, caps.capabilities, caps.all) == (how, capabilities, every)
    assert caps.includes("compute") and caps.includes("video") == (every or "video" in capabilities)


@pytest.mark.parametrize(
    ("env", "how", "kind", "devices"),
    [
        ({**MODERN, "NVIDIA_VISIBLE_DEVICES": "all"}, "set", "all", ()),
        ({**MODERN, "NVIDIA_VISIBLE_DEVICES": "none"}, "set", "none", ()),
        ({**MODERN, "NVIDIA_VISIBLE_DEVICES": "void"}, "set", "void", ()),
        ({**MODERN, "NVIDIA_VISIBLE_DEVICES": ""}, "set", "void", ()),
        ({**MODERN, "NVIDIA_VISIBLE_DEVICES": "0, GPU-1a2b"}, "set", "devices", ("0", "GPU-1a2b")),
        (MODERN, "unset", "void", ()),  # not a GPU container
        (LEGACY, "legacy", "all", ()),
    ],
)
def test_nvidia_visible_devices(env, how, kind, devices):
    visible = nvidia_visible_devices(facts(env))
    assert (visible.how, visible.kind, visible.devices) == (how, kind, devices)


def test_pins_devices():
    assert pins_devices("1") and pins_devices("GPU-1a2b") and pins_devices("MIG-0/1/0") and pins_devices("all,0")
    assert not any(pins_devices(v) for v in ("", " ", "all", "ALL", "none", "void"))
