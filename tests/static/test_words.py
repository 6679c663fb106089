from __future__ import annotations

import pytest

from imagelint.static.words import parse_arg_declarations, parse_key_values, process_word, split_raw

ENV = {"A": "1", "EMPTY": "", "PATH": "/usr/bin"}


@pytest.mark.parametrize(
    "word, expected",
    [
        ("$A", "1"),
        ("${A}", "1"),
        ("${NOPE}", ""),
        ("${NOPE:-dflt}", "dflt"),
        ("${EMPTY:-dflt}", "dflt"),
        ("${EMPTY-dflt}", ""),
        ("${NOPE-dflt}", "dflt"),
        ("${A:+alt}", "alt"),
        ("${NOPE:+alt}", ""),
        ("${EMPTY+alt}", "alt"),
        ("${NOPE:-${A}x}", "1x"),
        ("'$A'", "$A"),
        ('"$A b"', "1 b"),
        ('"\\$A"', "$A"),
        ("\\$A", "$A"),
        ("/x:${PATH}", "/x:/usr/bin"),
        ("a$", "a$"),
    ],
)
def test_process_word(word: str, expected: str) -> None:
    assert process_word(word, ENV) == expected


def test_backtick_escape() -> None:
    assert process_word("`$A", ENV, escape="`") == "$A"
    assert process_word("C:\\dir", ENV, escape="`") == "C:\\dir"


def test_split_raw_keeps_quotes_and_escaped_spaces() -> None:
    assert split_raw('a="x y" b=c\\ d  e') == ['a="x y"', "b=c\\ d", "e"]


def test_key_values_both_forms() -> None:
    assert parse_key_values('A=1 B="two words" C=${A:-x}', {}) == [("A", "1"), ("B", "two words"), ("C", "x")]
    assert parse_key_values("LEGACY some value", {}) == [("LEGACY", "some value")]


def test_arg_declarations() -> None:
    assert parse_arg_declarations('a b=1 c="x y"', {}) == [("a", None), ("b", "1"), ("c", "x y")]
