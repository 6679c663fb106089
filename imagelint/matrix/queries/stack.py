"""What the matrix answers about the node stack: the container toolkit, the device plugin and
its resource names, the GPU Operator.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from imagelint.matrix.answers import ToolkitFeature, row_uncertain
from imagelint.matrix.rowstore import (
    RowStore,
    _strip_v,
    _tool_key,
)

if TYPE_CHECKING:
    from imagelint.matrix.answers.stack import (
        DevicePluginNaming,
        DevicePluginRelease,
        GpuOperatorRelease,
        ToolkitRelease,
    )


class StackQueries(RowStore):
    """What the matrix answers about the node stack: the container toolkit, the device plugin and"""

    # --- container toolkit --------------------------------------------------------------------
    def toolkit_features(self, version: str) -> list[ToolkitFeature]:
        """Features (rows of ``toolkit_features``) present in a toolkit version."""
        key = _tool_key(version)
        if key is None:
            return []
        return [
            ToolkitFeature(r["name"], r["since"], r["description"], r["source"], row_uncertain(r))
            for r in self._section("toolkit_features")
            if (since := _tool_key(r["since"])) is not None and since <= key
        ]

    def toolkit_feature(self, name: str) -> ToolkitFeature | None:
        """The toolkit feature ``name`` (the release it came with), present or not in any pool."""
        r = next((r for r in self._section("toolkit_features") if r["name"] == name), None)
        return ToolkitFeature(r["name"], r["since"], r["description"], r["source"], row_uncertain(r)) if r else None

    def toolkit_has(self, version: str, feature: str) -> bool:
        return any(f.name == feature for f in self.toolkit_features(version))

    def toolkit_default_runtime_mode(self, version: str) -> str:
        """What ``nvidia-container-runtime`` mode ``auto`` resolves to on an NVML (x86/dGPU) host
        for this toolkit version: ``legacy`` before 1.18.0, ``jit-cdi`` from 1.18.0."""
        mode = "legacy"
        best: tuple[int, ...] = ()
        for feat in self._section("toolkit_features"):
            since = _tool_key(feat["since"])
            if feat.get("default_runtime_mode") and since is not None:
                key = _tool_key(version)
                if key is not None and since <= key and since >= best:
                    mode, best = feat["default_runtime_mode"], since
        return mode

    def toolkit(self, version: str) -> ToolkitRelease | None:
        from imagelint.matrix.answers.stack import ToolkitRelease

        key = _tool_key(version)
        for row in self._section("toolkit_releases"):
            if key is not None and _tool_key(row["version"]) == key:
                return ToolkitRelease(
                    _strip_v(row["version"]), row["date"], self.toolkit_default_runtime_mode(row["version"]),
                    tuple(f.name for f in self.toolkit_features(row["version"])), row.get("notable"),
                    row["source"], row_uncertain(row),
                )
        return None

    # --- device plugin ------------------------------------------------------------------------
    def device_plugin(self, version: str) -> DevicePluginRelease | None:
        from imagelint.matrix.answers.stack import DevicePluginRelease

        key = _tool_key(version)
        for row in self._section("device_plugin_releases"):
            if key is not None and _tool_key(row["version"]) == key:
                features = tuple(
                    f["name"] for f in self._section("device_plugin_features")
                    if (_tool_key(f["since"]) or (0,)) <= key
                )
                return DevicePluginRelease(
                    _strip_v(row["version"]), row["date"], features, row.get("notable"), row["source"], row_uncertain(row)
                )
        return None

    def device_plugin_requirement(self, name: str) -> str | None:
        for row in self._section("device_plugin_requirements"):
            if row["name"] == name:
                return row["value"]
        return None

    # --- GPU Operator -------------------------------------------------------------------------
    def gpu_operator(self, version: str) -> GpuOperatorRelease | None:
        from imagelint.matrix.answers.stack import GpuOperatorRelease

        key = _tool_key(version)
        for row in self._section("gpu_operator_releases"):
            if key is not None and _tool_key(row["version"]) == key:
                return GpuOperatorRelease(
                    _strip_v(row["version"]), tuple(row["drivers"]), row.get("default_driver"),
                    tuple(row.get("recommended_drivers", ())), row["container_toolkit"], row["device_plugin"],
                    row.get("gfd"), row.get("dcgm"), row.get("dcgm_exporter"), row.get("nfd"),
                    row.get("mig_manager"), row.get("driver_manager"), row["source"], row_uncertain(row),
                    tuple(row.get("affected_by", ())),
                )
        return None

    # --- device plugin resource naming --------------------------------------------------------
    def device_plugin_naming(self) -> DevicePluginNaming | None:
        from imagelint.matrix.answers.stack import naming_from_rows

        return naming_from_rows(self._section("device_plugin_resource_names"))
