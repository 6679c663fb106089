"""_hitscan.c keeps the tables of the first few keyword tuples it is given (gpuindex.KEYWORDS, once
per file of an image) and searches long texts without the GIL: the answers are the same for a
tuple whose tables are kept, for tuples past the kept few, for texts short and long, and while
other threads search with other tuples."""

from __future__ import annotations

import os
import random
import threading

import pytest

from imagelint.facts import gpuindex


def _expected(text: str, keywords: tuple[str, ...]) -> list[tuple[int, str]]:
    return [(i, line) for i, line in enumerate(text.split("\n")) if any(k in line for k in keywords)]


def _found(text: str | bytes, keywords: tuple[str, ...], lines) -> list[tuple[int, str]]:  # type: ignore[no-untyped-def]
    flat = lines(text, keywords)
    plain = text.decode("ascii") if isinstance(text, bytes) else text
    return [(flat[i], plain[flat[i + 1] : flat[i + 2]]) for i in range(0, len(flat), 3)]


def test_kept_and_unkept_keyword_tables_give_the_same_lines_on_short_and_long_texts() -> None:
    if not gpuindex.NATIVE:
        pytest.skip("the native keyword search is not built")
    from imagelint.facts._hitscan import lines

    rng = random.Random(40)
    words = [*gpuindex.KEYWORDS, "cuda", "gpu", "x = 1", "  ", "\n", "\n"]
    # More distinct tuples than the module keeps tables for, each asked again after the others.
    tuples = [gpuindex.KEYWORDS] + [tuple(rng.sample(gpuindex.KEYWORDS, 3)) for _ in range(7)]
    texts = []
    for size in (0, 40, 5_000, 20_000, 100_000):  # both sides of the GIL threshold (16 KiB)
        text = []
        while sum(map(len, text)) < size:
            text.append(rng.choice(words))
        texts.append("".join(text))
    for _ in range(3):
        for keywords in tuples:
            for text in texts:
                expected = _expected(text, keywords)
                assert _found(text, keywords, lines) == expected
                assert _found(text.encode("ascii"), keywords, lines) == expected
                assert lines(text, keywords, True) == lines(text, keywords)[:3]


def test_threads_searching_with_different_keywords_each_get_their_own_lines() -> None:
    if not gpuindex.NATIVE:
        pytest.skip("the native keyword search is not built")
    from imagelint.facts._hitscan import lines

    rng = random.Random(41)
    text = "".join(rng.choice([*gpuindex.KEYWORDS, "pad ", "\n"]) for _ in range(30_000))
    sets = [gpuindex.KEYWORDS] + [tuple(rng.sample(gpuindex.KEYWORDS, 4)) for _ in range(9)]
    expected = {keywords: _expected(text, keywords) for keywords in sets}
    failures: list[tuple[str, ...]] = []

    def search(keywords: tuple[str, ...]) -> None:
        for _ in range(20):
            if _found(text, keywords, lines) != expected[keywords]:
                failures.append(keywords)

    threads = [threading.Thread(target=search, args=(k,)) for k in sets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures


def test_the_pair_filter_finds_every_keyword_at_every_place_of_a_block() -> None:
    """One-byte text is first sifted 16 positions at a time by the pair filter (SSSE3: the anchor
    and the character after it looked up by nibble), which may let a position through that holds no
    keyword but must never hold one back: a keyword at every offset around the 16-byte blocks and the
    17-byte tail, beside bytes over 0x7f (high nibbles the tables leave empty), with more anchor
    characters than the filter has buckets, gives the lines the Python search gives, filter on and off."""
    if not gpuindex.NATIVE:
        pytest.skip("the native keyword search is not built")
    import platform

    from imagelint.facts._hitscan import lines, pair_filter

    available = pair_filter()
    if platform.machine() in ("x86_64", "AMD64") and os.environ.get("IMAGELINT_REQUIRE_NATIVE"):
        assert available, "the SSSE3 pair filter is off on an x86-64 CPU"
    rng = random.Random(17)
    # Anchors of 12 distinct characters (> 8 buckets), each keyword with a character after its anchor.
    many = ("qz1", "xq2", "jv3", "kw4", "zz5", "QX6", "JJ7", "VV8", "KK9", "XZ0", "@@a", "~~b")
    fillers = ("a", "b", " ", "\n", "é", "\xff", "q", "x", "Q", "z")  # (anchor characters alone: no keyword)
    try:
        for keywords in (gpuindex.KEYWORDS, many):
            for length in (15, 16, 17, 31, 32, 33, 47, 64, 100):
                for offset in range(0, length + 1):
                    for keyword in rng.sample(keywords, 3):
                        pad = "".join(rng.choice(fillers) for _ in range(length))
                        text = pad[:offset] + keyword + pad[offset:]
                        data = text.encode("utf-8")
                        expected = [(i, line) for i, line in enumerate(text.split("\n"))
                                    if any(k in line for k in keywords)]
                        for on in (True, False):
                            pair_filter(on)
                            for given in (text, data):
                                flat = lines(given, keywords)
                                plain = given if isinstance(given, str) else given.decode("utf-8")
                                # (bytes positions are byte offsets: compare the lines' text)
                                got = [(flat[i], (given[flat[i + 1] : flat[i + 2]] if isinstance(given, str)
                                                  else given[flat[i + 1] : flat[i + 2]].decode("utf-8")))
                                       for i in range(0, len(flat), 3)]
                                assert got == expected, (keywords, plain, on)
                                assert lines(given, keywords, True) == flat[:3]
    finally:
        pair_filter(available)
