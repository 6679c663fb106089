"""The engine: selection by longest prefix, severity overrides, suppressions, expiry, redaction, exit codes."""

from __future__ import annotations

import datetime as dt
from types import MappingProxyType

from imagelint.core.config import Config, IgnoreEntry
from imagelint.core.engine import RuleSelection, exit_code_for, needs_layers, parse_inline_ignores, selected_rules

from tests.rules.helpers import facts, of, run

PINNED = {"CUDA_VISIBLE_DEVICES": "1", "NVIDIA_DISABLE_REQUIRE": "1"}


def test_longest_prefix_wins():
    sel = RuleSelection(select=("IL1", "IL302"), ignore=("IL10", "IL3"))
    assert not sel.is_selected("IL101")       # IL10 (ignore) longer than IL1
    assert sel.is_selected("IL302")           # IL302 (select) longer than IL3
    assert not sel.is_selected("IL301")
    assert not sel.is_selected("IL201")       # not selected at all
    assert RuleSelection(ignore=("IL3",)).is_selected("IL101")
    assert not RuleSelection(select=("IL302",), ignore=("IL302",)).is_selected("IL302")  # tie: ignore


def test_config_only_rules_skip_layers():
    assert not needs_layers(selected_rules(Config(select=("IL103", "IL104"))))
    assert needs_layers(selected_rules(Config(select=("IL2",))))


def test_ignore_removes_findings():
    result = run(facts(PINNED), config=Config(ignore=("IL301",)))
    assert not of(result, "IL301") and of(result, "IL104") and "IL301" not in result.rules_run


def test_severity_override():
    result = run(facts(PINNED), config=Config(severity=MappingProxyType({"IL104": "error"})))
    assert of(result, "IL104")[0].severity == "error"


def test_config_ignore_by_image_glob_is_counted():
    entry = IgnoreEntry("IL301", "example/*", "pinned on purpose for the bench rig", None, "cfg.toml:3")
    result = run(facts(PINNED), config=Config(ignores=(entry,)))
    assert not of(result, "IL301")
    [s] = result.suppressed
    assert s.finding.rule == "IL301" and s.reason.startswith("pinned") and "cfg.toml:3" in s.by
    other = run(facts(PINNED, subject="other/app:1"), config=Config(ignores=(entry,)))
    assert of(other, "IL301") and not other.suppressed


def test_expired_ignore_stops_applying_with_notice():
    entry = IgnoreEntry("IL301", "*", "temporary", dt.date(2020, 1, 1), "cfg.toml:3")
    result = run(facts(PINNED), config=Config(ignores=(entry,)))
    assert of(result, "IL301") and not result.suppressed
    assert any("expired on 2020-01-01" in n for n in result.notices)


def test_inline_label_suppresses_and_can_be_refused():
    labels = {"io.imagelint.ignore": "IL301:bench rig,IL104:checked by hand"}
    result = run(facts(PINNED, labels=labels))
    assert not result.findings or all(f.rule not in ("IL301", "IL104") for f in result.findings)
    assert {s.finding.rule for s in result.suppressed} == {"IL301", "IL104"}
    refused = run(facts(PINNED, labels=labels), config=Config(inline_ignores=False))
    assert of(refused, "IL301") and not refused.suppressed
    assert any("not honoured" in n for n in refused.notices)


def test_inline_label_needs_a_reason():
    result = run(facts(PINNED, labels={"io.imagelint.ignore": "IL301"}))
    assert of(result, "IL301") and any("has no reason" in n for n in result.notices)
    assert parse_inline_ignores("IL302:a reason, il104 : other") == {"IL302": "a reason", "IL104": "other"}


def test_secret_env_values_are_redacted_from_findings():
    env = {"CUDA_VISIBLE_DEVICES": "s3cr3t-token-value", "API_TOKEN": "s3cr3t-token-value"}
    result = run(facts(env))
    [f] = of(result, "IL301")
    assert "s3cr3t-token-value" not in f.message and "[redacted]" in f.message
    assert "s3cr3t-token-value" not in str(dict(f.extra))


def test_exit_codes():
    clean = run(facts({}))
    warn = run(facts({"NVIDIA_DISABLE_REQUIRE": "1"}))
    err = run(facts(PINNED))
    assert exit_code_for([clean], "error") == 0
    assert exit_code_for([warn], "error") == 0 and exit_code_for([warn], "warning") == 1
    assert exit_code_for([err], "error") == 1 and exit_code_for([err], "never") == 0
    from imagelint.core.engine import ImageResult

    assert exit_code_for([err, ImageResult("x", error="gone", error_exit_code=3)], "error") == 3


def test_secret_names_are_whole_words():
    from imagelint.redact import looks_secret

    assert looks_secret("HF_TOKEN") and looks_secret("DB_PASSWORD") and looks_secret("AWS_SECRET_ACCESS_KEY")
    assert looks_secret("nvidia-api-key")
    assert not looks_secret("TOKENIZERS_PARALLELISM") and not looks_secret("MONKEYPATCH") and not looks_secret("PWD")
    f = facts({"HF_TOKEN": "hf_abcdef", "TOKENIZERS_PARALLELISM": "false", "API_KEY": "true"})
    assert f.secret_values() == ("hf_abcdef",)


def test_a_rule_writing_a_long_headline_fails_the_suite(monkeypatch) -> None:
    """The engine warns HeadlineTooLong for any finding whose headline is over HEADLINE_LIMIT or not
    one line; pyproject.toml's filterwarnings makes that an error in every test (no fixture patches
    the factory), while the CLI ignores it (reports split a long headline themselves)."""
    import types
    import warnings

    import pytest

    from imagelint.core import engine
    from imagelint.deploytarget import Target
    from imagelint.rules.base import HEADLINE_LIMIT, FindingFactory, HeadlineTooLong

    make = FindingFactory("IL999", "test-rule", "warning")
    for message in ("x" * (HEADLINE_LIMIT + 1), "two\nlines"):
        rule = types.SimpleNamespace(id="IL999", needs=(), check=lambda ctx, m=message: iter([make(m)]))
        monkeypatch.setattr(engine, "selected_rules", lambda config, rule=rule: [rule])
        with pytest.raises(HeadlineTooLong, match="IL999"):
            engine.run_rules(facts(), Target(), None, Config())
    short = types.SimpleNamespace(id="IL999", needs=(), check=lambda ctx: iter([make("fine")]))
    monkeypatch.setattr(engine, "selected_rules", lambda config: [short])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [f.message for f in engine.run_rules(facts(), Target(), None, Config()).findings] == ["fine"]
