"""matrix.shipped: one section of the shipped matrix, sliced out of the file text, equals the full load's."""

from __future__ import annotations

import re

import pytest

from imagelint.matrix import shipped
from imagelint.matrix.loader import _read, _shipped_files, load_matrix

_TABLE = re.compile(r"^[ \t]*\[\[[ \t]*([A-Za-z0-9_]+)[ \t]*\]\]", re.MULTILINE)


def _newest_text() -> str:
    files = _shipped_files()
    return _read(files[max(files)])


@pytest.mark.parametrize("section", sorted(set(_TABLE.findall(_newest_text()))))
def test_a_sliced_section_has_the_rows_of_the_full_load(section: str) -> None:
    full = load_matrix(max(_shipped_files())).sections.get(section, ())
    assert [dict(r) for r in shipped.shipped_section(section)] == [dict(r) for r in full]


def test_the_slice_takes_only_headers_at_a_line_start() -> None:
    text = ("x = 'names'\n  [[ names ]]\na = 1\n[other]\nb = 2\n[[names]]\nc = 3\n# [[names]]\n"
            "[[names_more]]\nd = 4\n")
    assert shipped._slice(text, "names") == "  [[ names ]]\na = 1\n[[names]]\nc = 3\n# [[names]]\n"
