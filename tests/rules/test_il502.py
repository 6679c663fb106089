"""IL502: cases that fire and cases that must not."""

from __future__ import annotations

from tests.rules.helpers import facts, of, pool, run, target


def test_toolkit_without_cdi_in_cdi_mode():
    [f] = of(run(facts({}), target(pool(toolkit="1.11.0", runtime_mode="cdi"))), "IL502")
    assert "cdi" in f.message
    assert not of(run(facts({}), target(pool(toolkit="1.14.0", runtime_mode="cdi"))), "IL502")
