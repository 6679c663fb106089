"""Checking a pool against what the matrix says a device plugin / toolkit release needs and has.

Every threshold and feature name comes from the matrix (``device_plugin_requirements``,
``device_plugin_features``, ``toolkit_features``); this module only compares.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from imagelint.deploytarget import NodePool
from imagelint.rules.pools import compare

if TYPE_CHECKING:
    from imagelint.matrix.model import Matrix


def _numeric(version: str) -> str:
    # Release versions may carry a leading v or an -rc suffix; compare their numeric head.
    return version.strip().lstrip("vV").split("-")[0]


def _features_known(matrix: Matrix, section: str) -> set[str]:
    return set(matrix.names_in(section))


def device_plugin_unmet(release: Any, pool: NodePool, matrix: Matrix) -> list[str]:
    """What a device plugin release needs that the pool lacks, as sentences."""
    what = f"device plugin {pool.device_plugin}"
    problems: list[str] = []
    min_driver = matrix.device_plugin_requirement("min_driver")
    if min_driver and pool.driver and compare(pool.driver, min_driver) < 0:
        problems.append(f"{what} needs driver >= {min_driver}, pool has {pool.driver}")
    min_toolkit = matrix.device_plugin_requirement("min_toolkit")
    if min_toolkit and pool.toolkit and compare(_numeric(pool.toolkit), _numeric(min_toolkit)) < 0:
        problems.append(f"{what} needs nvidia-container-toolkit >= {min_toolkit}, pool has {pool.toolkit}")
    known = _features_known(matrix, "device_plugin_features")
    for strategy in pool.device_list_strategy:
        feature = f"strategy-{strategy}"
        if feature in known and feature not in release.features:
            problems.append(f"{what} does not support deviceListStrategy={strategy}")
    if pool.mig_strategy and pool.mig_strategy != "none" and "mig-strategies" in known and "mig-strategies" not in release.features:
        problems.append(f"{what} has no MIG strategies (pool uses migStrategy={pool.mig_strategy})")
    return problems


# Runtime modes and the toolkit feature that must be present for the mode to exist.
_MODE_FEATURE = {"cdi": "cdi-generate"}


def toolkit_unmet(release: Any, pool: NodePool, matrix: Matrix) -> list[str]:
    """What the pool's settings need from its toolkit release that the release lacks."""
    what = f"container toolkit {pool.toolkit}"
    problems: list[str] = []
    known = _features_known(matrix, "toolkit_features")
    feature = _MODE_FEATURE.get(pool.runtime_mode or "")
    if feature and feature in known and feature not in release.features:
        problems.append(f"{what} has no {pool.runtime_mode} mode (it needs the {feature} feature of a newer toolkit)")
    return problems


def component_findings(ctx, finding, label: str, version_of, lookup, unmet):
    """IL501/IL502's shared loop: for every pool that names a version of the component
    (``version_of(pool)``), look the release up in the matrix (``lookup(matrix, version)``)
    and report each requirement ``unmet(release, pool, matrix)`` yields; an unknown
    version is an info finding (its requirements could not be checked)."""
    from imagelint.rules.base import INFO

    if ctx.matrix is None:
        return
    for pool in ctx.pools:
        version = version_of(pool)
        if not version:
            continue
        release = lookup(ctx.matrix, version)
        if release is None:
            yield finding(
                f"{label} {version} on pool {pool.name} is not in the matrix; its requirements could not be checked",
                None, severity=INFO, pool=pool, remediation="",
            )
            continue
        for problem in unmet(release, pool, ctx.matrix):
            yield finding(f"pool {pool.name}: {problem}", None, pool=pool)
