"""The facts and findings on the test images are exactly those recorded before the capture changed.

The expected data (tests/facts/data/capture_facts.json) was written by
``python -m tests.facts.capture_corpus --write`` on the capture that held every candidate text
file whole; the streaming capture must find the same GPU-index settings (file, line, layer),
follow the same scripts and configs, and report the same findings and warnings.
The facts were first recorded on the old capture; later rewrites of the fixture (rule wording,
#13's index-0 severity) changed only its findings, never its facts (the diff shows it).
"""

from __future__ import annotations

import json

import pytest

from tests.facts.capture_corpus import EXAMPLE, FIXTURE, SPECS, record, reference_for

EXPECTED = json.loads(FIXTURE.read_text())


def test_the_fixture_covers_every_corpus_image() -> None:
    assert sorted(EXPECTED) == sorted([*SPECS, EXAMPLE])


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_facts_and_findings_are_unchanged(name: str, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("IMAGELINT_CACHE_DIR", str(tmp_path / "cache"))
    got = json.loads(json.dumps(record(reference_for(name, tmp_path))))
    want = json.loads(json.dumps(EXPECTED[name]))
    # The one field added with the streaming capture: files not read to the end. None here.
    assert got["facts"].pop("unread_files") == [] and want["facts"].pop("unread_files", []) == []
    assert got["facts"]["gpu"] == want["facts"]["gpu"]  # the settings, followed files and needs first: clearer diffs
    assert got == want
