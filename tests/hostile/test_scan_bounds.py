"""The scanners that read every byte of a library do work linear in those bytes, with bounded
work per candidate: counted (headers judged, searches made, records unpacked), never timed.

The adversary packs a member with what the scanners look for: the fatbin magic repeated, valid
container headers whose entries are not, section names, ELF note owners. A small layer inflates
to tens of MiB of it; what the scanners do per byte must not grow with how dense it is.
"""

from __future__ import annotations

import struct
from dataclasses import replace

import pytest

from imagelint.facts import elf as elf_module
from imagelint.facts import fatbin as fatbin_module
from imagelint.facts.elf import ElfNoteScanner, SectionTableCapture
from imagelint.facts.fatbin import FatbinScanner
from tests.facts.fatbin_support import container, entry
from tests.hostile.cli import run_cli
from tests.support.hostile_images import image_of, publish, tar_layer
from tests.support.imagebuilder import File

MiB = 1 << 20
MAGIC = struct.pack("<I", 0xBA55ED50)
ELF_HEADER = b"\x7fELF\x02\x01\x01" + bytes(57)  # 64-bit little-endian, no tables: names searched everywhere
CHUNK = MiB


class _Counted:
    """Calls of the module functions that judge one candidate each."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        for name in ("_container_header", "_entry_header"):
            real = getattr(fatbin_module, name)
            monkeypatch.setattr(fatbin_module, name, self._counting(real))

    def _counting(self, real):  # type: ignore[no-untyped-def]
        def counted(*args):  # type: ignore[no-untyped-def]
            self.calls += 1
            return real(*args)

        return counted


class _Searched(bytes):
    """A chunk that counts the searches made in it."""

    searches = 0

    def find(self, *args):  # type: ignore[no-untyped-def, override]
        _Searched.searches += 1
        return super().find(*args)

    def rfind(self, *args):  # type: ignore[no-untyped-def, override]
        _Searched.searches += 1
        return super().rfind(*args)


def _feed(scanner, data: bytes, chunk: int = CHUNK) -> int:  # type: ignore[no-untyped-def]
    feeds = 0
    for i in range(0, len(data), chunk):
        scanner.feed(_Searched(data[i : i + chunk]))
        feeds += 1
    return feeds


def test_a_library_of_repeated_fatbin_magic_through_the_reader_judges_no_candidate(tmp_path, monkeypatch):
    """32 KiB of layer, 32 MiB of .so: the bare magic is never a candidate (every container
    starts with the magic, version 1 and header size 16)."""
    from imagelint.facts.capture import CAPTURE_SPEC
    from imagelint.layers.limits import DEFAULT_LIMITS
    from imagelint.layers.reader import read_image_filesystem
    from imagelint.sources import SourceOptions, open_images

    layer = tar_layer([File("usr/lib/x86_64-linux-gnu/libmagic.so", MAGIC * (8 * MiB))])
    assert len(layer.blob) < 64 << 10
    ref = publish(image_of([layer]), tmp_path)["oci-dir"]
    made: list[FatbinScanner] = []

    def scanner() -> FatbinScanner:
        made.append(FatbinScanner())
        return made[-1]

    spec = replace(CAPTURE_SPEC, scanner_factory={**CAPTURE_SPEC.scanner_factory, fatbin_module.SCANNER_NAME: scanner})
    counted = _Counted(monkeypatch)
    for image in open_images(ref, SourceOptions(no_cache=True)):
        read_image_filesystem(image, spec, DEFAULT_LIMITS)
    assert made, "the .so was not scanned"
    assert counted.calls == 0, counted.calls  # 8 Mi candidates before


def test_dense_false_fatbin_headers_cost_constant_work_each():
    # Valid container headers back to back: each one's entry is the next header (rejected).
    header = struct.pack("<IHHQ", 0xBA55ED50, 1, 16, MiB)
    data = header * (2 * MiB)  # 32 MiB
    for chunk in (CHUNK, 4093, 61):
        scanner = FatbinScanner()
        feeds = _feed(scanner, data[: 4 * MiB] if chunk < CHUNK else data, chunk)
        fed = min(len(data), 4 * MiB) if chunk < CHUNK else len(data)
        assert scanner.candidates <= fed // 8 + 1, (chunk, scanner.candidates)
        # Bytes searched twice: only near a chunk edge (headers that straddle it, each pushed
        # back shorter than the one before): a constant per chunk, whatever the chunk holds.
        assert scanner.rescanned <= 4 * 64 * feeds, (chunk, scanner.rescanned, feeds)


def test_one_fatbin_then_128_mib_of_section_names_takes_a_bounded_number_of_searches():
    names = b".nv_fatbin\x00__nv_relfatbin\x00"
    data = ELF_HEADER + container(entry(arch=80)) + names * ((128 * MiB) // len(names))
    scanner = FatbinScanner()
    _Searched.searches = 0
    feeds = _feed(scanner, data)
    assert scanner.result()["sass"] == ["sm_80"]
    # Per chunk: one search per kept hit of each name (the last MAX_NAME_HITS), and a seam.
    bound = feeds * 2 * (SectionTableCapture.MAX_NAME_HITS + 1) + 2 * feeds + 16
    assert _Searched.searches <= bound, (_Searched.searches, bound)  # 10 Mi before


def test_a_file_of_note_owners_unpacks_a_bounded_number_of_records(monkeypatch):
    unpacked = 0
    real_struct = elf_module.struct

    class CountingStruct:
        def __getattr__(self, name):  # type: ignore[no-untyped-def]
            return getattr(real_struct, name)

        @staticmethod
        def unpack_from(*args):  # type: ignore[no-untyped-def]
            nonlocal unpacked
            unpacked += 1
            return real_struct.unpack_from(*args)

    monkeypatch.setattr(elf_module, "struct", CountingStruct())
    data = ELF_HEADER + (b"\x13\x00\x00\x00NVIDIA Corporation\x00") * ((64 * MiB) // 23)
    scanner = ElfNoteScanner()
    _feed(scanner, data)
    scanner.result()
    assert unpacked <= 64, unpacked  # one per owner occurrence (2.9 Mi) before


def test_the_cli_reads_a_layer_of_fatbin_magic_and_section_names_in_bounded_memory(tmp_path):
    names = b".nv_fatbin\x00__nv_relfatbin\x00"
    so = ELF_HEADER + container(entry(arch=80)) + names * ((32 * MiB) // len(names))
    layer = tar_layer([File("usr/lib/x86_64-linux-gnu/libmagic.so", MAGIC * (8 * MiB)),
                       File("usr/lib/x86_64-linux-gnu/libnames.so", so)])
    ref = publish(image_of([layer]), tmp_path)["oci-dir"]
    run = run_cli("inspect", ref, "--no-cache", "--format", "json", timeout=300, rlimit_as=1 << 30)
    assert run.returncode == 0, run.stderr
    assert "sm_80" in run.stdout
    assert run.peak_rss_bytes < 300 * MiB, run.peak_rss_bytes
