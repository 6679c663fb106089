from __future__ import annotations

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO.parent / "shared" / "reference"


def reference_json(name: str) -> dict:
    path = REFERENCE / name
    if not path.exists():  # CI places ../shared/reference beside the repo; say so loudly if not
        pytest.fail(f"reference data missing: {path}")
    return json.loads(path.read_text())
