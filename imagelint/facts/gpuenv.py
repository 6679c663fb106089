"""The GPU variables as the container will see them: the container toolkit's and CUDA's semantics, once.

Rules read these instead of parsing values themselves:

* ``driver_capabilities(facts)``: the effective ``NVIDIA_DRIVER_CAPABILITIES``. Empty or unset
  means ``utility,compute``; unset in a *legacy* image (``CUDA_VERSION`` set,
  ``NVIDIA_REQUIRE_CUDA`` empty or unset) means every capability (toolkit
  ``getDriverCapabilities``; nvidia-facts §1.1, §5).
* ``nvidia_visible_devices(facts)``: the effective ``NVIDIA_VISIBLE_DEVICES``: ``all``,
  ``none`` (a GPU container with no device), ``void`` (not a GPU container: unset, empty or
  ``void`` in a non-legacy image), or a device list; unset in a legacy image means ``all``
  (toolkit ``devicesFromEnvvars``).
* ``pins_devices(value)``: whether a ``NVIDIA_VISIBLE_DEVICES`` / ``CUDA_VISIBLE_DEVICES``
  value selects specific devices (indices, UUIDs, MIG ids) rather than ``all`` / ``none`` /
  ``void`` / nothing.

The variable names are the runtime's interface (``imagelint.facts.names``); "legacy image" is
the requirement evaluator's ``is_legacy_image`` (``imagelint.matrix.require``).
"""

from __future__ import annotations

from dataclasses import dataclass

from imagelint.facts.model import EnvSetting, ImageFacts

# NVIDIA_DRIVER_CAPABILITIES when empty or unset (nvidia-container-toolkit).
DEFAULT_CAPABILITIES = ("compute", "utility")
# NVIDIA_VISIBLE_DEVICES values that name no specific device.
_NO_SPECIFIC_DEVICE = frozenset({"", "all", "none", "void"})


def is_legacy(facts: ImageFacts) -> bool:
    """``CUDA_VERSION`` non-empty and ``NVIDIA_REQUIRE_CUDA`` empty or unset (toolkit ``IsLegacy``)."""
    from imagelint.matrix.require import is_legacy_image

    return is_legacy_image(dict(facts.cuda.env))


@dataclass(frozen=True)
class DriverCapabilities:
    """``NVIDIA_DRIVER_CAPABILITIES`` as the toolkit applies it.

    ``how``: ``set`` (a non-empty value), ``empty`` / ``unset`` (the default, utility,compute),
    ``legacy`` (unset in a legacy image: every capability). ``capabilities``: the listed names,
    lower-case, in order, or the default; ``all`` is true when every capability is mounted.
    """

    setting: EnvSetting | None
    how: str
    capabilities: tuple[str, ...]
    all: bool

    def includes(self, capability: str) -> bool:
        return self.all or capability.lower() in self.capabilities


def driver_capabilities(facts: ImageFacts) -> DriverCapabilities:
    setting = facts.gpu.driver_capabilities
    if setting is None and is_legacy(facts):
        return DriverCapabilities(None, "legacy", (), True)
    raw = setting.value if setting is not None else ""
    listed = tuple(dict.fromkeys(c.strip().lower() for c in raw.split(",") if c.strip()))
    if listed:
        return DriverCapabilities(setting, "set", listed, "all" in listed)
    return DriverCapabilities(setting, "empty" if setting is not None else "unset", DEFAULT_CAPABILITIES, False)


@dataclass(frozen=True)
class VisibleDevices:
    """``NVIDIA_VISIBLE_DEVICES`` as the toolkit applies it.

    ``kind``: ``all``, ``none`` (driver, no device), ``void`` (no GPU container), ``devices``
    (``devices`` lists them). ``how``: ``set`` or ``unset``; ``legacy`` when unset in a legacy
    image (then ``all``).
    """

    setting: EnvSetting | None
    how: str
    kind: str
    devices: tuple[str, ...] = ()


def nvidia_visible_devices(facts: ImageFacts) -> VisibleDevices:
    setting = facts.gpu.visible_devices
    if setting is None:
        return VisibleDevices(None, "legacy", "all") if is_legacy(facts) else VisibleDevices(None, "unset", "void")
    word = setting.value.strip().lower()
    if word in _NO_SPECIFIC_DEVICE:
        return VisibleDevices(setting, "set", word or "void")
    # A list that mixes a keyword with devices ("all,0") is read as a device list: it pins.
    return VisibleDevices(setting, "set", "devices", tuple(d.strip() for d in setting.value.split(",") if d.strip()))


def selected_devices(value: str) -> tuple[str, tuple[str, ...]]:
    """What a ``*_VISIBLE_DEVICES`` value selects: ``("none"|"all"|"passthrough"|"devices", items)``.

    ``${NVIDIA_VISIBLE_DEVICES}``, ``${CUDA_VISIBLE_DEVICES:-all}``, ``$GPUS`` and ``$(VAR)`` pass a
    value through from the environment (a script or manifest, not expanded): they pin nothing.
    CDI names (``nvidia.com/gpu=all``, ``nvidia.com/gpu=0``) are read by what follows ``=``.
    ``none``/``void``/empty select no device, ``all`` all of them; a list mixing a keyword with
    devices (``all,0``) is a device list, as the toolkit reads it.
    """
    v = value.strip().strip("'\"")
    if "$" in v:
        return "passthrough", ()
    items = []
    for part in (p.strip() for p in v.split(",")):
        if "=" in part and "/" in part.split("=", 1)[0]:  # a CDI fully-qualified device name
            part = part.split("=", 1)[1]
        if part:
            items.append(part)
    lowered = [i.lower() for i in items]
    if not items or (len(items) == 1 and lowered[0] in ("none", "void")):
        return "none", ()
    if lowered == ["all"]:
        return "all", ()
    # A list that mixes a keyword with devices ("all,0") is read by the toolkit as a device list.
    return "devices", tuple(i for i, low in zip(items, lowered) if low not in ("all", "none", "void")) or tuple(items)


def pins_devices(value: str) -> bool:
    """True when a visible-devices value selects specific devices (not all / none / void / empty,
    not a value passed through from the environment; CDI names read by their device)."""
    return selected_devices(value)[0] == "devices"


__all__ = [
    "DEFAULT_CAPABILITIES",
    "DriverCapabilities",
    "VisibleDevices",
    "driver_capabilities",
    "is_legacy",
    "nvidia_visible_devices",
    "pins_devices",
    "selected_devices",
]
