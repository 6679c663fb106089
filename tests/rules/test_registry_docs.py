"""The registry's metadata contract and docs/rules.md generated from it (never drifts)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from imagelint.rules import RULES, get_rule
from imagelint.rules.base import SEVERITIES
from imagelint.rules.docs import render_markdown

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = {
    "IL101": "cuda-driver-too-old", "IL102": "require-unsatisfied", "IL103": "require-invalid",
    "IL104": "require-check-disabled", "IL105": "cuda-version-conflict", "IL106": "cuda-version-unknown",
    "IL107": "compat-libs-unusable", "IL201": "driver-lib-bundled", "IL202": "cuda-stubs-on-loader-path",
    "IL301": "hardcoded-visible-devices", "IL302": "hardcoded-gpu-index", "IL303": "visible-devices-all-leak",
    "IL304": "driver-capabilities-mismatch", "IL402": "platform-mismatch", "IL501": "device-plugin-incompatible",
    "IL502": "toolkit-incompatible",
}


def test_ids_and_names_are_the_public_contract():
    registered = {r.id: r.name for r in RULES.values()}
    assert {k: registered.get(k) for k in CONTRACT} == CONTRACT  # more rules may be registered (IL401, IL6xx)
    assert len(set(registered.values())) == len(registered)  # names are unique too


def test_metadata_is_complete():
    for rule in RULES.values():
        assert rule.severity in SEVERITIES
        assert set(rule.needs) <= {"config", "files", "target", "gpu-code"} and rule.needs
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name)
        assert len(rule.doc) > 200 and rule.remediation, rule.id
        assert get_rule(rule.id.lower()) is rule and get_rule(rule.name) is rule


def test_docs_rules_md_is_current():
    current = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert current == render_markdown(), "docs/rules.md is stale: run python -m imagelint.rules.docs > docs/rules.md"


def test_explain_and_rules_commands():
    out = subprocess.run(["imagelint", "explain", "cuda-driver-too-old"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.startswith("IL101 cuda-driver-too-old: ") and "minor-version" in out.stdout
    md = subprocess.run(["imagelint", "explain", "cuda-driver-too-old", "--format", "markdown"], capture_output=True, text=True, timeout=60)
    assert md.returncode == 0 and md.stdout.startswith("## IL101 cuda-driver-too-old")
    bad = subprocess.run(["imagelint", "explain", "IL999"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and bad.stderr.startswith("imagelint: error: unknown rule")
    listing = subprocess.run(["imagelint", "rules"], capture_output=True, text=True, timeout=60)
    assert listing.returncode == 0 and all(rid in listing.stdout for rid in CONTRACT)
