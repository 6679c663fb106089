from __future__ import annotations

import json
import os
import tracemalloc
from pathlib import Path

import pytest

from examples.synth_elf import build_elf, compat_libcuda, note_record
from imagelint.facts.driverlibs import driver_library_table, forward_compat_note
from imagelint.facts.elf import MAX_TOTAL, ElfNoteScanner, scan_elf_notes

# The team's reference folder sits beside the checkout (``../shared``), as CI lays it out.
REFERENCE = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "require-cuda-cases.json"
CASES = json.loads(REFERENCE.read_text())["upstream_unit_tests"]["cuda_compat_elf_headers"]["cases"] if REFERENCE.exists() else []

# The NCT test table, inlined so the test does not depend on the reference folder.
NCT_HEADERS = [
    ("libcuda.so.575.57.08", {"Format": 1, "CUDA Version": "12.9", "Driver": [535, 550, 560, 565, 570, 575],
                              "Device": [1, 2, 7, 8, 9, 10, 11, 12, 13, 14]}),
    ("libcuda.so.590.44.01", {"Format": 1, "CUDA Version": "13.1", "Driver": [535, 550, 570, 575, 580, 590],
                              "Device": [1, 2, 7, 8, 9, 10, 11, 12, 13, 14]}),
    ("libcuda.orin.13.2.1.so.1.1", {"Format": 1, "CUDA Version": "13.2"}),
]


def note_of(data: bytes, chunk: int = 1 << 16):
    return forward_compat_note(scan_elf_notes(data, chunk), driver_library_table())


@pytest.mark.parametrize("name,header", NCT_HEADERS)
def test_nct_headers_round_trip(name: str, header: dict) -> None:
    desc = json.dumps(header).encode()
    note, problem = note_of(build_elf(note_record("NVIDIA Corporation", desc)))
    assert problem is None and note is not None
    assert note.cuda_version == header["CUDA Version"]
    assert note.driver_branches == tuple(header.get("Driver", ()))
    assert note.devices == tuple(header.get("Device", ()))


def test_reference_table_matches_inlined_cases() -> None:
    if not CASES:
        if os.environ.get("CI"):  # CI always lays ../shared beside the clone: its absence is a failure there
            pytest.fail(f"{REFERENCE} is missing")
        pytest.skip(f"{REFERENCE} not present (a clone without the team's reference folder beside it)")
    assert [(c["file"], c["header"]) for c in CASES if "header" in c] == NCT_HEADERS


def test_invalid_json_is_a_problem_not_a_crash() -> None:
    note, problem = note_of(build_elf(note_record("NVIDIA Corporation", b'{"Format":1,"CUDA Version":')))
    assert note is None and problem and "JSON" in problem


@pytest.mark.parametrize("chunk", [1, 7, 4096, 1 << 20])
@pytest.mark.parametrize(
    "kw",
    [dict(), dict(note_in_segment=False), dict(elf32=True), dict(big_endian=True), dict(elf32=True, big_endian=True, note_in_segment=False)],
)
def test_any_layout_any_chunking(kw: dict, chunk: int) -> None:
    data = compat_libcuda("12.4", [535, 550], [1, 2], **kw)
    result = scan_elf_notes(data, chunk)
    assert result["elf"] is True
    [n] = result["notes"]
    assert n["section"] == ".note.cuda.fwd_compatibility" and n["owner"] == "NVIDIA Corporation"
    note, _ = note_of(data, chunk)
    assert note is not None and note.cuda_version == "12.4" and note.driver_branches == (535, 550)


def test_note_only_in_a_section_far_before_the_section_table_is_found_streaming() -> None:
    # 8 MB of padding between the note and the section table: the note has long gone by
    # when the table says where it was, so only the owner-signature capture can keep it.
    data = compat_libcuda("12.9", [535, 570], note_in_segment=False, padding=8 << 20)
    tracemalloc.start()
    scanner = ElfNoteScanner()
    for i in range(0, len(data), 1 << 20):
        scanner.feed(data[i : i + (1 << 20)])
        _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    result = scanner.result()
    assert result["notes"][0]["section"] == ".note.cuda.fwd_compatibility"
    assert sum(len(r.data) for r in scanner._ranges) <= MAX_TOTAL
    assert peak < 8 << 20  # never holds the library (chunks are 1 MB; the file is 8 MB)


def test_other_owner_in_the_section_is_not_the_note() -> None:
    data = build_elf(note_record("GNU", b"\x01\x02\x03\x04"))
    result = scan_elf_notes(data)
    assert [n["owner"] for n in result["notes"]] == ["GNU"]
    assert note_of(data) == (None, None)


def test_not_elf_and_truncated() -> None:
    assert scan_elf_notes(b"#!/bin/sh\necho hi\n")["elf"] is False
    assert scan_elf_notes(b"")["elf"] is False
    data = compat_libcuda("12.4", [535], note_in_segment=False, padding=4096)
    cut = scan_elf_notes(data[:100])
    assert cut["elf"] is True and cut["notes"] == []  # the note is cut off: nothing half-parsed
    garbage = b"\x7fELF\x02\x01\x01" + bytes(range(256)) * 40
    assert scan_elf_notes(garbage)["elf"] in (True, False)  # no exception on nonsense headers
