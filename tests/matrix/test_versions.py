from __future__ import annotations

import pytest

from imagelint.matrix.versions import (
    GoSemver,
    VersionSyntaxError,
    compare_versions,
    driver_branch,
    dsl_compare,
)


@pytest.mark.parametrize(
    "a,b,expected",
    [
        ("470.57.02", "470", 1),  # rest "57.02" is not zeros
        ("470.57.02", "471", -1),
        ("12.0", "12.0.0", 0),  # rest must be zeros
        ("12.0.0.0", "12", 0),
        ("12.9", "12.10", -1),  # numeric, not lexical
        ("535.104.05", "535.104.5", 0),  # components are numbers: 05 == 5
        ("535.104.05", "535.104.05", 0),
        ("12.2", "12.2.2", -1),
        ("12..2", "12.2", 0),  # dsl.c skips every '.' between numbers
        ("10.0", "9.9", 1),
    ],
)
def test_compare_versions(a: str, b: str, expected: int) -> None:
    assert compare_versions(a, b) == expected
    assert compare_versions(b, a) == -expected


@pytest.mark.parametrize("bad", ["12.x", "v12.2", "12.2-rc1", " 12", ".5", "", "18446744073709551615"])
def test_compare_versions_rejects_what_dsl_rejects(bad: str) -> None:
    if bad == "":
        # An empty side never enters the loop in dsl.c; it compares as "nothing left".
        assert compare_versions(bad, "0") == 0
        return
    with pytest.raises(VersionSyntaxError):
        compare_versions(bad, "1")


def test_uintmax_is_invalid_but_one_less_is_not() -> None:
    assert dsl_compare("18446744073709551614", ">", "1") is True
    assert dsl_compare("18446744073709551615", ">", "1") is None


@pytest.mark.parametrize(
    "op,expected", [("=", False), ("!=", True), ("<", False), ("<=", False), (">", True), (">=", True)]
)
def test_dsl_operators(op: str, expected: bool) -> None:
    assert dsl_compare("535.104.05", op, "535") is expected


def test_driver_branch() -> None:
    assert driver_branch("535.104.05") == 535
    assert driver_branch("570") == 570
    with pytest.raises(VersionSyntaxError):
        driver_branch("r535")


def test_go_semver_coercion_and_order() -> None:
    assert GoSemver.parse("v11.6").compare(GoSemver.parse("11.6.0")) == 0
    assert GoSemver.parse("012.1").major == 12  # Masterminds NewVersion keeps leading zeros
    assert GoSemver.parse("12.2").compare(GoSemver.parse("12.2-rc1")) == 1  # release > pre-release
    assert GoSemver.parse("1.0.0-alpha").compare(GoSemver.parse("1.0.0-alpha.1")) == -1
    assert GoSemver.parse("1.0.0-2").compare(GoSemver.parse("1.0.0-10")) == -1
    assert GoSemver.parse("1.0.0-beta").compare(GoSemver.parse("1.0.0-10")) == 1
    for bad in ("12.2.2.009", "", "12.", "sm_80", "1.0.0-01"):
        with pytest.raises(VersionSyntaxError):
            GoSemver.parse(bad)
