"""Shared fixtures for the static-lint tests."""

from __future__ import annotations

import pytest

from imagelint.rules.base import RuleInfo

IL60X_MODULES = (
    "imagelint.rules.gpu_request_limit_mismatch",
    "imagelint.rules.gpu_resource_unknown",
    "imagelint.rules.gpu_taint_not_tolerated",
    "imagelint.rules.gpu_node_selector_unsatisfiable",
    "imagelint.rules.runtime_class_missing",
)


def il60x_infos() -> dict[str, RuleInfo]:
    import importlib

    infos = [RuleInfo.from_module(importlib.import_module(m)) for m in IL60X_MODULES]
    return {i.id: i for i in infos}


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch):
    """The rule registry with the IL60x rules in it.

    Until the lead adds them to ``imagelint/rules/__init__.py`` (their file), tests
    add them here for the test's duration only; once registered this is a no-op.
    """
    import imagelint.core.config
    import imagelint.rules

    missing = {k: v for k, v in il60x_infos().items() if k not in imagelint.rules.RULES}
    if missing:
        merged = {**imagelint.rules.RULES, **missing}
        monkeypatch.setattr(imagelint.rules, "RULES", merged)
        monkeypatch.setattr(imagelint.core.config, "RULES", merged)
    return imagelint.rules.RULES if not missing else merged


@pytest.fixture(scope="session")
def matrix():
    from imagelint.matrix import load_matrix

    return load_matrix()
