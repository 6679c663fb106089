"""Driver-branch standing on a given day, from NVIDIA's "Supported Drivers and CUDA Toolkit Versions"
(620 page, Table 2: R580 LTSB until June 2028, R595 PB until March 2027, R620 LTSB until September
2029; the 615 page: R535 LTSB until June 2026, R610 NFB until August 2026; R570 PB until February
2026; "All other previous driver branches not listed in the table above ... are end of life")."""

from __future__ import annotations

import datetime as dt
import json

from typer.testing import CliRunner

from imagelint.cli import app
from imagelint.compat.lifecycle import branch_status, driver_rows, supported_branches

from tests.rules.helpers import matrix


def test_supported_today_follows_the_run_date() -> None:
    today = {r["branch"]: r["supported_today"] for r in driver_rows(matrix(), dt.date(2026, 12, 2))}
    assert [b for b, s in today.items() if s == "yes"] == [580, 595, 620]
    earlier = {r["branch"]: r["supported_today"] for r in driver_rows(matrix(), dt.date(2026, 5, 1))}
    assert [b for b, s in earlier.items() if s == "yes"] == [535, 580, 595, 610, 620]


def test_unlisted_older_branches_are_past_end_of_life_like_listed_ones() -> None:
    day = dt.date(2026, 12, 2)
    assert {branch_status(b, matrix(), day).status for b in (525, 535, 550, 590)} == {"past-eol"}
    assert branch_status(999, matrix(), day).status == "unknown"


def test_no_recommendation_is_past_its_end_of_life() -> None:
    for day in (dt.date(2026, 1, 1), dt.date(2026, 7, 1), dt.date(2026, 12, 2), dt.date(2027, 6, 1)):
        for status in supported_branches(matrix(), day):
            assert status.eol_date is None or status.eol_date >= day


def test_drivers_command_takes_a_driver_the_way_driver_does() -> None:
    runner = CliRunner()
    for text, branch in (("535.104.05", 535), ("R570", 570), ("580", 580)):
        result = runner.invoke(app, ["drivers", text, "--format", "json"])
        rows = json.loads(result.stdout)
        assert [r["branch"] for r in rows] == [branch], result.output
        assert "supported_today" in rows[0]
    text = runner.invoke(app, ["drivers"]).stdout
    assert "supported_today" in text.splitlines()[0]
