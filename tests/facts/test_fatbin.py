"""The fatbin scanner, arch semantics, and gpu_code_facts through a real image read.

Synthetic containers follow the layout documented in imagelint/facts/fatbin.py
(16-byte container header, 64-byte+ entry headers); the network tests check the
same scanner against libraries compiled by the real nvcc and listed by cuobjdump.
"""

from __future__ import annotations

import os
import random
import struct
import time
from types import MappingProxyType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from imagelint.facts.fatbin import (
    FATBIN_CAPTURE_RULES,
    SCANNERS,
    FatbinScanner,
    gpu_code_facts,
    parse_fatbins,
)
from imagelint.facts.gpuarch import GpuTarget, code_fit, needed_for
from imagelint.layers.match import compile_glob
from imagelint.layers.model import CaptureRule, CaptureSpec
from imagelint.layers.reader import read_image_filesystem
from imagelint.versions import ComputeCapability
from tests.facts.fatbin_support import (
    DEBUG,
    as_cuobjdump_names,
    compile_library,
    container,
    cuobjdump_listing,
    cuobjdump_targets,
    elf_with_sections,
    entry,
    ptx,
)
from tests.facts.helpers import open_spec
from tests.support.imagebuilder import File, Hardlink, ImageSpec, Symlink


def scan(data: bytes, chunk: int | None = None) -> dict:
    s = FatbinScanner()
    if chunk is None:
        s.feed(data)
    else:
        for i in range(0, len(data), chunk):
            s.feed(data[i : i + chunk])
    return s.result()


ELF_LIKE = b"\x7fELF" + bytes(200)


# --- the scanner ----------------------------------------------------------------------------


def test_sass_and_ptx_targets_from_one_container():
    data = ELF_LIKE + container(entry(arch=80), entry(arch=86), ptx(90)) + b"\x00" * 100
    r = scan(data)
    assert r["sass"] == ["sm_80", "sm_86"] and r["ptx"] == ["compute_90"]
    assert r["ptx_isa"] == {"compute_90": "9.0"} and r["containers"] == 1 and r["entries"] == 3
    assert r["compressed"] == 1 and not r["malformed"] and not r["truncated"]


def test_arch_and_family_specific_variants_and_sm_100_plus():
    data = container(entry(arch=90, variant="a"), entry(arch=100, variant="f", header_size=112),
                     ptx(120, variant="a", header_size=80), entry(arch=103, header_size=96))
    r = scan(data)
    assert r["sass"] == ["sm_90a", "sm_100f", "sm_103"] and r["ptx"] == ["compute_120a"]


def test_many_containers_are_unioned_and_counted():
    data = b"".join([container(entry(arch=75)), b"junk" * 10, container(entry(arch=75), ptx(80)),
                     container()])  # an empty container is legal (nvcc -G emits one)
    r = scan(data)
    assert r["containers"] == 3 and r["sass"] == ["sm_75"] and r["ptx"] == ["compute_80"]


def test_magic_inside_a_payload_is_skipped_not_parsed():
    hidden = container(entry(arch=52))
    data = container(entry(arch=80, payload=b"\x01" * 8 + hidden + b"\x02" * 8))
    r = scan(data)
    assert r["sass"] == ["sm_80"] and r["containers"] == 1


def test_lto_and_unknown_kinds_are_not_sass_or_ptx():
    r = scan(container(entry(kind=8, arch=80, version=(1, 65)), entry(kind=4, arch=0)))
    assert r["sass"] == [] and r["ptx"] == [] and r["other"] == ["kind4_0", "lto_80"]


def test_debug_and_compressed_flags_are_counted():
    r = scan(container(entry(arch=80, flags=0x11 | DEBUG | 0x2000), ptx(80)))
    assert r["debug"] == 1 and r["compressed"] == 2


@pytest.mark.parametrize(
    "garbage",
    [
        container(entry(arch=80), version=2),          # unknown container version
        container(entry(arch=80), header_size=24),     # unknown header size
        container(entry(arch=80), fat_size=1 << 50),   # absurd size
    ],
)
def test_false_container_headers_are_not_containers(garbage):
    r = scan(b"xx" + garbage + b"yy")
    assert r["containers"] == 0 and r["sass"] == []


def test_bad_entry_ends_the_container_and_search_resumes_there():
    good_after = container(entry(arch=70))
    bad = entry(arch=80, header_size=32)  # header shorter than 64: not an entry
    data = container(bad + good_after)
    r = scan(data)
    assert r["malformed"] == 1 and r["sass"] == ["sm_70"] and r["containers"] == 2
    too_big = entry(arch=80, payload_size=1 << 20)  # payload larger than its container
    r = scan(container(too_big))
    assert r["malformed"] == 1 and r["sass"] == []


def test_x86_code_comparing_against_the_magic_is_ignored():
    # cmp eax, 0xba55ed50 ; jne ...  (libcudart checks the constant like this)
    code = b"\x3d\x50\xed\x55\xba\x75\x10\x48\x89\xc7" * 50
    r = scan(code + container(entry(arch=89)) + code)
    assert r["sass"] == ["sm_89"] and r["containers"] == 1 and not r["malformed"]


def test_truncated_member_keeps_what_was_seen():
    data = container(entry(arch=80), entry(arch=90, payload=b"\x00" * 1000))
    r = scan(data[:-10])
    assert r["sass"] == ["sm_80", "sm_90"] and r["truncated"]
    r = scan(data[: 16 + 104 + 30])  # cut inside the second entry header
    assert r["sass"] == ["sm_80"] and r["truncated"]


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 7, 16, 63, 64, 65, 4096])
def test_every_chunking_matches_one_shot(chunk):
    data = (b"P\xed" + ELF_LIKE + container(entry(arch=80), ptx(80)) + b"\x50\xed\x55" + container(entry(arch=90, variant="a"))
            + container(entry(arch=80, header_size=8)) + b"\x50" + container(entry(arch=75)))
    assert scan(data, chunk) == scan(data) == parse_fatbins(data)


def test_memory_stays_bounded_and_no_fatbin_is_cheap():
    s = FatbinScanner()
    block = os.urandom(1 << 20)
    start = time.perf_counter()
    for _ in range(32):
        s.feed(block)
        assert len(s._held) <= 64
    elapsed = time.perf_counter() - start
    assert elapsed < 2.0, elapsed  # bytes.find over 32 MB; the reader inflates at ~1 GB/s
    # Magic prefixes at every chunk end and many false headers: still bounded.
    for _ in range(2000):
        s.feed(b"\x00" * 13 + b"\x50\xed\x55")
        s.feed(b"\xba\x01\x00\x10\x00" + b"\xff" * 20)
        assert len(s._held) <= 64
    assert s.result()["containers"] == 0


# Fragments hypothesis mixes with random bytes: whole, cut and corrupted containers.
_FRAGMENTS = [
    container(entry(arch=80), ptx(90)),
    container(entry(arch=90, variant="a", header_size=112)),
    container(entry(arch=100, variant="f"), entry(arch=75, payload=b"")),
    container(),
    container(entry(arch=80), fat_size=30),
    container(entry(arch=80, header_size=48)),
    b"\x50\xed\x55\xba",
    b"\x50\xed\x55\xba\x01\x00\x10\x00",
    b"\x50",
    struct.pack("<IHHQ", 0xBA55ED50, 1, 16, 200) * 3,  # headers whose entry is the next header
    container(entry(arch=80)) * 3,
]


@st.composite
def _streams(draw):
    parts = draw(st.lists(st.one_of(st.binary(max_size=300), st.sampled_from(_FRAGMENTS),
                                    st.sampled_from(_FRAGMENTS).map(lambda b: b[: len(b) // 2])), max_size=12))
    data = b"".join(parts)
    if not draw(st.booleans()):
        return data
    # The same bytes split into ELF sections (with ld's or lld's name layout, or no table).
    lld = draw(st.booleans())
    names = [".nv_fatbin", "__nv_relfatbin"] + ([] if lld else [".rodata", ".text"])
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=3)))
    pieces = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)])]
    sections = [(draw(st.sampled_from(names)), p) for p in pieces]
    return elf_with_sections(sections, strtab_after=70_000 if lld else 0, section_table=draw(st.booleans()))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=_streams(), seed=st.integers(0, 2**32 - 1))
def test_random_bytes_and_chunkings_agree_with_one_shot_and_never_raise(data, seed):
    rng = random.Random(seed)
    s = FatbinScanner()
    i = 0
    while i < len(data):
        n = rng.choice([1, 2, 3, 4, 7, 15, 16, 17, 63, 64, 65, 200, 1000])
        s.feed(data[i : i + n])
        i += n
    expected = parse_fatbins(data)
    assert s.result() == expected == scan(data)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=_streams(), seed=st.integers(0, 2**32 - 1))
def test_dropping_what_the_scanner_calls_skippable_changes_nothing(data, seed):
    """The reader drops payload bytes unread (``skippable``/``skipped``): same result as feeding them."""
    rng = random.Random(seed)
    s = FatbinScanner()
    i = dropped = 0
    while i < len(data):
        k = min(s.skippable(), len(data) - i)
        if k:
            n = rng.randint(1, k)
            s.skipped(n)
            dropped += n
        else:
            n = rng.choice([1, 3, 16, 64, 65, 1000])
            s.feed(data[i : i + n])
        i += n
    _same_or_conservatively_unplaced(s.result(), parse_fatbins(data))


def _same_or_conservatively_unplaced(streamed: dict, oracle: dict) -> None:
    """Equal -- or, where bytes dropped unread held the section names (a container that claims
    bytes past its section, with lld's layout), every container counted as loaded and flagged."""
    if streamed == oracle:
        return
    union = lambda r, k: set(r[k]).union(*(set(p[k]) for p in r["not_loaded"].values()))  # noqa: E731
    assert all(union(streamed, k) == union(oracle, k) for k in ("sass", "ptx", "other"))
    loaded = ("sass", "ptx", "other", "ptx_isa", "containers", "entries")
    if all(streamed[k] == oracle[k] for k in loaded):
        return  # the same loaded code; a not-loaded section known only by its number
    # Never less loaded code than the oracle; what it has more of comes from unplaced containers.
    assert streamed["unplaced"] > 0, repr((streamed, oracle))
    for k in ("sass", "ptx", "other"):
        assert set(oracle[k]) <= set(streamed[k])


def test_payloads_are_skippable_and_a_wrong_skip_is_refused():
    payload = b"\x01" * 5000
    data = container(entry(arch=80, payload=payload), entry(arch=90))
    s = FatbinScanner()
    s.feed(data[: 16 + 64])  # container header + first entry header
    assert s.skippable() == len(payload)
    with pytest.raises(ValueError):
        s.skipped(len(payload) + 1)
    s.skipped(len(payload))
    assert s.skippable() == 0
    s.feed(data[16 + 64 + len(payload):])
    assert s.result() == parse_fatbins(data) and s.result()["sass"] == ["sm_80", "sm_90"]


def test_the_reader_drops_fatbin_payloads_unread(tmp_path, monkeypatch):
    """Through the real layer reader: payload bytes never become Python bytes objects."""
    from imagelint.layers import tarwalk

    payload = os.urandom(3 << 20)
    lib = b"\x7fELF" + bytes(60) + container(entry(arch=80, payload=payload), ptx(90)) + os.urandom(1000)
    image = open_spec(tmp_path, ImageSpec(layers=[[File("usr/lib/libk.so", lib)]]))
    handed: list[int] = []
    real = tarwalk.TarWalker.read_data

    def counting(self, limit=None):  # type: ignore[no-untyped-def]
        data = real(self, limit)
        handed.append(len(data))
        return data

    monkeypatch.setattr(tarwalk.TarWalker, "read_data", counting)
    fs = read_image_filesystem(image, CaptureSpec(FATBIN_CAPTURE_RULES, SCANNERS))
    [obj] = gpu_code_facts(fs)
    assert obj.sass == ("sm_80",) and obj.ptx == ("compute_90",)
    from imagelint.layers.reader import _SCAN_CHUNK

    # At most the chunk in which the payload starts is handed over; the rest is dropped unread.
    assert sum(handed) < len(lib) - len(payload) + _SCAN_CHUNK < len(lib) // 2, f"{sum(handed)} of {len(lib)} bytes"


# --- which fatbins the runtime loads: the ELF section of each container ------------------------


def _scan_dropping(data: bytes, seed: int = 0) -> dict:
    """Feed like the layer reader: drop every byte the scanner calls skippable."""
    rng = random.Random(seed)
    s = FatbinScanner()
    i = 0
    while i < len(data):
        k = min(s.skippable(), len(data) - i)
        if k:
            n = rng.randint(1, k) if seed else k
            s.skipped(n)
        else:
            n = rng.choice([1, 7, 64, 4096, 1 << 16])
            s.feed(data[i : i + n])
        i += n
    return s.result()


RDC = [(".text", b"\x90" * 300), (".nv_fatbin", container(entry(arch=80, payload=b"\x01" * 5000))),
       ("__nv_relfatbin", container(entry(arch=80), ptx(90))), (".rodata", b"x" * 50)]


@pytest.mark.parametrize("strtab_after", [0, 300_000], ids=["ld", "lld"])
def test_relocatable_fatbins_of_rdc_builds_are_not_loaded_code(strtab_after):
    """``nvcc -rdc=true``: the device-linked code in .nv_fatbin runs; __nv_relfatbin is for nvlink only."""
    data = elf_with_sections(RDC, strtab_after=strtab_after)
    for r in (parse_fatbins(data), scan(data, 4093), scan(data, 1 << 16), _scan_dropping(data), _scan_dropping(data, 7)):
        assert r["sass"] == ["sm_80"] and r["ptx"] == [] and r["ptx_isa"] == {}, r
        assert r["containers"] == 1 and r["entries"] == 1 and r["elf"] and r["unplaced"] == 0
        assert r["not_loaded"] == {"__nv_relfatbin": {"containers": 1, "sass": ["sm_80"], "ptx": ["compute_90"],
                                                      "other": []}}


def test_a_fatbin_in_another_section_is_counted_apart_with_its_section():
    data = elf_with_sections([(".nv_fatbin", container(entry(arch=75))), (".rodata", container(entry(arch=90)))])
    r = parse_fatbins(data)
    assert r == scan(data, 5) and r["sass"] == ["sm_75"]
    assert r["not_loaded"] == {".rodata": {"containers": 1, "sass": ["sm_90"], "ptx": [], "other": []}}
    # Names far from the section table (lld): the scanner still knows .nv_fatbin and
    # __nv_relfatbin by their name strings, and says which section the rest is in.
    r = scan(elf_with_sections([(".nv_fatbin", container(entry(arch=75))), (".rodata", container(entry(arch=90)))],
                               strtab_after=200_000))
    assert r["sass"] == ["sm_75"] and r["not_loaded"] == {
        "section 2": {"containers": 1, "sass": ["sm_90"], "ptx": [], "other": []}}


def test_section_names_too_far_before_the_table_leave_containers_unplaced(monkeypatch):
    """Names are searched only near the section table (and from the first container on): a
    .shstrtab further back is missed, and every container then counts, flagged -- never dropped."""
    from imagelint.facts.elf import SectionTableCapture

    monkeypatch.setattr(SectionTableCapture, "NAME_WINDOW", 1000)
    data = elf_with_sections(RDC, strtab_after=300_000)
    r = _scan_dropping(data)
    assert r["sass"] == ["sm_80"] and r["ptx"] == ["compute_90"] and r["unplaced"] == 2 and r["not_loaded"] == {}


def test_a_section_name_that_is_not_plain_text_is_shown_by_number():
    data = elf_with_sections([(".nv_fatbin", container(entry(arch=75))), ("\x1b[2J", container(entry(arch=90)))])
    assert list(parse_fatbins(data)["not_loaded"]) == ["section 2"] == list(scan(data, 100)["not_loaded"])


def test_without_a_readable_section_table_every_container_counts_and_says_so():
    data = elf_with_sections(RDC, section_table=False)
    for r in (parse_fatbins(data), scan(data, 1000), _scan_dropping(data)):
        assert r["sass"] == ["sm_80"] and r["ptx"] == ["compute_90"] and r["unplaced"] == 2 and r["elf"]
    # A 32-bit ELF is placed too.
    r = scan(elf_with_sections(RDC, elf32=True), 333)
    assert r["sass"] == ["sm_80"] and r["ptx"] == [] and r["unplaced"] == 0


def test_a_payload_that_claims_the_section_table_does_not_swallow_it():
    """A hostile size: the scanner asks the reader to drop bytes only up to what the section
    capture needs, so the table is still read and the container is still placed."""
    lying = container(entry(arch=80, payload=b"\x01" * 64))
    lying = lying[:16] + lying[16:24] + struct.pack("<Q", 1 << 30) + lying[32:]  # payload_size: 1 GiB
    lying = lying[:8] + struct.pack("<Q", (1 << 30) + 64) + lying[16:]  # and a container that holds it
    data = elf_with_sections([("__nv_relfatbin", lying), (".nv_fatbin", container(entry(arch=86)))])
    r = _scan_dropping(data)
    assert r["truncated"] and r["sass"] == [] and r["not_loaded"]["__nv_relfatbin"]["sass"] == ["sm_80"]
    assert r == parse_fatbins(data)


def test_the_reader_places_containers_while_dropping_payloads(tmp_path):
    lib = elf_with_sections([(".nv_fatbin", container(entry(arch=80, payload=os.urandom(2 << 20)), ptx(80))),
                             ("__nv_relfatbin", container(ptx(90, payload=os.urandom(1 << 20)))),
                             (".rodata", container(entry(arch=89)))])
    image = open_spec(tmp_path, ImageSpec(layers=[[File("usr/lib/librdc.so", lib)]]))
    fs = read_image_filesystem(image, CaptureSpec(FATBIN_CAPTURE_RULES, SCANNERS))
    [obj] = gpu_code_facts(fs)
    assert (obj.sass, obj.ptx, obj.ptx_isa) == (("sm_80",), ("compute_80",), (("compute_80", "9.0"),))
    assert obj.not_loaded == (".rodata: sm_89", "__nv_relfatbin: compute_90")
    assert fs.scan("usr/lib/librdc.so") == parse_fatbins(lib)


# --- arch semantics ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "target, cc, runs",
    [
        ("sm_80", (8, 0), True), ("sm_80", (8, 6), True), ("sm_86", (8, 0), False), ("sm_80", (9, 0), False),
        ("sm_90a", (9, 0), True), ("sm_90a", (9, 1), False), ("sm_100a", (10, 3), False),
        ("sm_100f", (10, 3), True), ("sm_103f", (10, 0), False), ("sm_100f", (12, 0), False),
        ("compute_80", (9, 0), True), ("compute_80", (12, 1), True), ("compute_90", (8, 9), False),
        ("compute_90a", (9, 0), True), ("compute_90a", (10, 0), False),
        ("compute_100f", (10, 3), True), ("compute_100f", (11, 0), False),
    ],
)
def test_what_runs_where(target, cc, runs):
    assert GpuTarget.parse(target).runs_on(cc) is runs


def test_code_fit_and_needed_for():
    assert not code_fit(["sm_70", "sm_80"], [], (9, 0)).runs
    fit = code_fit(["sm_80"], ["compute_80"], (9, 0))
    assert fit.runs and fit.needs_jit and fit.ptx == ("compute_80",)
    assert code_fit(["sm_80"], ["compute_80"], (8, 6)).sass == ("sm_80",)
    assert needed_for((9, 0)) == "sm_90 SASS or PTX <= compute_90"
    assert needed_for((8, 6)) == "sm_80..sm_86 SASS or PTX <= compute_86"
    # One reading of a compute capability, wherever it is written: dotted, a bare major, or as nvcc names it.
    assert ComputeCapability.parts_of("12.1") == (12, 1) and ComputeCapability.parts_of("sm_90") == (9, 0)
    assert ComputeCapability.parts_of("9") == (9, 0) and ComputeCapability.parts_of("9.x") is None
    assert GpuTarget.parse("sm_9") is None and str(GpuTarget.parse("compute_120f")) == "compute_120f"


def _jit(isa: str, cuda: str, newest: str = "9.1"):
    from imagelint.facts.gpuarch import JitLimit

    return JitLimit(isa, cuda, matrix_newest=newest)


@pytest.mark.parametrize(
    "sass, ptx_isa, cc, jit, outcome",
    [
        (["sm_80"], {}, (8, 9), _jit("8.2", "12.2"), "sass"),  # same major, higher minor
        (["sm_80"], {}, (9, 0), _jit("8.2", "12.2"), "no-kernel"),  # SASS never crosses a major
        (["sm_90a"], {}, (9, 0), None, "sass"),
        (["sm_100f"], {}, (10, 3), None, "sass"),  # family: B300 runs B200's family code
        (["sm_120f"], {}, (12, 1), None, "sass"),  # GB10 runs RTX 50's family code
        (["sm_120f"], {}, (10, 0), None, "no-kernel"),
        ([], {"compute_90a": "8.4"}, (10, 0), _jit("9.0", "13.0"), "no-kernel"),  # "a" PTX is not portable
        ([], {"compute_100f": "8.8"}, (10, 3), _jit("9.0", "13.0"), "jit"),
        ([], {"compute_80": "8.4"}, (12, 0), _jit("8.7", "12.8"), "jit"),  # plain PTX JITs to any newer GPU
        ([], {"compute_80": "9.0"}, (9, 0), _jit("8.2", "12.2"), "ptx-too-new"),
        ([], {"compute_80": "9.0", "compute_75": "8.0"}, (9, 0), _jit("8.2", "12.2"), "jit"),  # one old PTX will do
        ([], {"compute_80": "9.5"}, (9, 0), _jit("9.1", "13.4"), "jit-unknown-driver"),  # both past the matrix
        ([], {"compute_80": "9.5"}, (9, 0), _jit("9.0", "13.0"), "ptx-too-new"),  # the driver is known older
        ([], {"compute_80": "9.0"}, (9, 0), None, "jit-unknown-driver"),
    ],
)
def test_judge_kernels(sass, ptx_isa, cc, jit, outcome):
    from imagelint.facts.gpuarch import ERR_NO_KERNEL, ERR_PTX_TOO_NEW, judge_kernels

    v = judge_kernels(sass, list(ptx_isa), cc, jit, ptx_isa.items())
    assert v.outcome == outcome, v.reason
    assert v.error == {"no-kernel": ERR_NO_KERNEL, "ptx-too-new": ERR_PTX_TOO_NEW}.get(outcome)
    assert v.runs is (outcome in ("sass", "jit", "jit-unknown-driver"))


def test_jit_limits_from_the_matrix():
    from imagelint.facts.gpuarch import jit_limit_for_cuda, jit_limit_for_driver
    from tests.rules.helpers import matrix

    m = matrix()
    got = {d: (j.cuda, j.ptx_isa) for d in ("450.80.02", "535.104.05", "535", "550.54.14", "565.57.01",
                                              "570.86.10", "580.65.06") if (j := jit_limit_for_driver(m, d))}
    assert got == {"450.80.02": ("11.0", "7.0"), "535.104.05": ("12.2", "8.2"), "535": ("12.2", "8.2"),
                   "550.54.14": ("12.4", "8.4"), "565.57.01": ("12.7", "8.6"), "570.86.10": ("12.8", "8.7"),
                   "580.65.06": ("13.0", "9.0")}
    assert jit_limit_for_cuda(m, "12.6").ptx_isa == "8.5"  # 12.6 writes no new ISA
    assert jit_limit_for_cuda(m, "13.1").ptx_isa == "9.1" and jit_limit_for_cuda(m, "13.3").ptx_isa == "9.3"
    assert jit_limit_for_cuda(m, "12") is None and jit_limit_for_driver(m, None) is None


# --- which members are scanned, and gpu_code_facts over a real image read -------------------


@pytest.mark.parametrize(
    "path, scanned",
    [
        ("usr/local/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so", True),
        ("usr/local/cuda-12.4/targets/x86_64-linux/lib/libcublasLt.so.12.4.5.8", True),
        ("usr/local/lib/python3.11/dist-packages/flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so", True),
        ("app/build/libk.so", True),
        ("opt/kernels/model.fatbin", True),
        ("etc/ld.so.conf", False),
        ("etc/ld.so.cache", False),
        ("etc/ld.so.conf.d/cuda.conf", False),
        ("usr/share/doc/libfoo/README", False),
        ("app/run.py", False),
    ],
)
def test_capture_patterns(path, scanned):
    assert any(compile_glob(r.pattern).fullmatch(path) for r in FATBIN_CAPTURE_RULES) is scanned


def _spec() -> CaptureSpec:
    rules = (*FATBIN_CAPTURE_RULES, CaptureRule("**", "record"))
    return CaptureSpec(rules, MappingProxyType(dict(SCANNERS)))


def test_gpu_code_facts_from_a_real_image_read(tmp_path):
    big_payload = os.urandom(3 << 20)  # spans the reader's 1 MB scan chunks
    lib = ELF_LIKE + container(entry(arch=80, payload=big_payload), ptx(80)) + b"tail"
    spec = ImageSpec(layers=[
        [File("usr/lib/x86_64-linux-gnu/libk.so.1.2", lib, 0o755),
         Symlink("usr/lib/x86_64-linux-gnu/libk.so.1", "libk.so.1.2"),
         File("usr/lib/x86_64-linux-gnu/libplain.so.6", ELF_LIKE * 100, 0o755),
         File("usr/share/doc/x.txt", b"hello")],
        [File("opt/app/kern.fatbin", container(entry(arch=90, variant="a"))),
         Hardlink("opt/app/kern2.fatbin", "opt/app/kern.fatbin")],
    ])
    image = open_spec(tmp_path, spec)
    fs = read_image_filesystem(image, _spec())
    code = gpu_code_facts(fs)
    assert [(c.path, c.sass, c.ptx) for c in code] == [
        ("opt/app/kern.fatbin", ("sm_90a",), ()),
        ("usr/lib/x86_64-linux-gnu/libk.so.1.2", ("sm_80",), ("compute_80",)),
    ]
    lib_prov = code[1].provenance
    assert lib_prov.kind == "file" and lib_prov.layer_index == 0 and lib_prov.layer_digest == image.layers[0].digest
    assert code[0].provenance.layer_index == 1


# --- real nvcc output (PyPI CUDA 13.0), cross-checked with cuobjdump -------------------------

REAL_CASES = [
    (("arch=compute_80,code=sm_80",), ["sm_80"], []),
    (("arch=compute_80,code=sm_80", "arch=compute_80,code=compute_80"), ["sm_80"], ["compute_80"]),
    (("arch=compute_80,code=compute_80",), [], ["compute_80"]),  # CUDA 13 PTX only (ISA 9.0)
    (("arch=compute_90a,code=sm_90a",), ["sm_90a"], []),
    (("arch=compute_100a,code=sm_100a",), ["sm_100a"], []),
    (("arch=compute_100f,code=sm_100f",), ["sm_100f"], []),
    (("arch=compute_120f,code=[sm_120f,compute_120f]",), ["sm_120f"], ["compute_120f"]),
    (("arch=compute_75,code=sm_75", "arch=compute_86,code=sm_86"), ["sm_75", "sm_86"], []),
]
REAL_IDS = ["sm80", "sm80+ptx", "ptx80-only", "sm90a", "sm100a", "sm100f", "sm120f+ptx", "sm75+sm86"]


@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize("gencodes, sass, ptx_targets", REAL_CASES, ids=REAL_IDS)
def test_real_nvcc_libraries(gencodes, sass, ptx_targets):
    lib = compile_library(gencodes)
    data = lib.read_bytes()
    r = scan(data, 1 << 20)
    assert r["sass"] == sass and r["ptx"] == ptx_targets
    assert not r["malformed"] and not r["truncated"] and r == parse_fatbins(data) == scan(data, 4093)
    assert r == _scan_dropping(data) and r["unplaced"] == 0 and r["not_loaded"] == {}
    assert (as_cuobjdump_names(r["sass"]), set(r["ptx"])) == cuobjdump_targets(lib)
    if ptx_targets:
        assert r["ptx_isa"] == {ptx_targets[0]: "9.0"}  # CUDA 13.0 writes PTX ISA 9.0


@pytest.mark.network
@pytest.mark.slow
def test_real_relocatable_device_code_build():
    """``nvcc -rdc=true -shared``: cuobjdump lists only the device-linked SASS of .nv_fatbin; the
    objects' SASS and PTX in __nv_relfatbin are never loaded (PTX there would not JIT on a newer GPU)."""
    lib = compile_library(("arch=compute_80,code=sm_80", "arch=compute_90,code=compute_90"), ("-rdc=true",))
    data = lib.read_bytes()
    r = scan(data, 1 << 16)
    assert (set(r["sass"]), set(r["ptx"])) == cuobjdump_targets(lib) == ({"sm_80"}, set())
    assert r["not_loaded"]["__nv_relfatbin"]["ptx"] == ["compute_90"] and r["unplaced"] == 0
    assert r == parse_fatbins(data) == _scan_dropping(data)


# What NVIDIA's rules say for the real builds above, per compute capability and driver: SASS runs
# within its major (a: that GPU only; f: its family), PTX JITs forward (a/f: not past the
# arch/family) when the driver's JIT knows CUDA 13.0's ISA 9.0 -- R580 does, R535 (CUDA 12.2,
# ISA 8.2) does not.
CCS = [(6, 1), (7, 0), (7, 5), (8, 0), (8, 6), (8, 9), (9, 0), (10, 0), (10, 3), (12, 0), (12, 1)]
EXPECTED = {
    "ptx80-only": {"535.104.05": {cc: "no-kernel" if cc < (8, 0) else "ptx-too-new" for cc in CCS},
                   "580.65.06": {cc: "no-kernel" if cc < (8, 0) else "jit" for cc in CCS}},
    "sm100f": {d: {cc: "sass" if cc in ((10, 0), (10, 3)) else "no-kernel" for cc in CCS}
               for d in ("535.104.05", "580.65.06")},
    "sm100a": {d: {cc: "sass" if cc == (10, 0) else "no-kernel" for cc in CCS} for d in ("535.104.05", "580.65.06")},
    "sm120f+ptx": {d: {cc: "sass" if cc in ((12, 0), (12, 1)) else "no-kernel" for cc in CCS}
                   for d in ("535.104.05", "580.65.06")},
    "sm80+ptx": {"535.104.05": {cc: "no-kernel" if cc < (8, 0) else "sass" if cc < (9, 0) else "ptx-too-new"
                                for cc in CCS},
                 "580.65.06": {cc: "no-kernel" if cc < (8, 0) else "sass" if cc < (9, 0) else "jit" for cc in CCS}},
}


@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_real_builds_per_gpu_and_driver(case):
    from imagelint.facts.gpuarch import jit_limit_for_driver, judge_kernels
    from tests.rules.helpers import matrix

    gencodes = REAL_CASES[REAL_IDS.index(case)][0]
    r = parse_fatbins(compile_library(gencodes).read_bytes())
    for driver, per_cc in EXPECTED[case].items():
        jit = jit_limit_for_driver(matrix(), driver)
        got = {cc: judge_kernels(r["sass"], r["ptx"], cc, jit, r["ptx_isa"].items()).outcome for cc in CCS}
        assert got == per_cc, driver


@pytest.mark.network
@pytest.mark.slow
def test_real_cuda11_library_from_pypi():
    """A CUDA 11.x library from a PyPI wheel (nvjpeg 11.9, built by CUDA 11.8: PTX ISA 7.8), Kepler
    to Hopper. cuobjdump 13 refuses Kepler, so it is asked arch by arch and sm_35/sm_37 stay unverified."""
    import zipfile

    from tests.facts.test_real_nvidia_files import _wheel

    whl = _wheel("nvidia-nvjpeg-cu11")
    out = whl.parent / "libnvjpeg.so.11"
    if not out.is_file():
        with zipfile.ZipFile(whl) as z:
            out.write_bytes(z.read(next(n for n in z.namelist() if n.endswith("/libnvjpeg.so.11"))))
    data = out.read_bytes()
    r = scan(data, 1 << 16)
    assert r == parse_fatbins(data) == _scan_dropping(data) and not r["malformed"] and r["unplaced"] == 0
    assert set(r["ptx_isa"].values()) == {"7.8"} and r["ptx"] == ["compute_90"]
    sass, ptx_, unchecked = cuobjdump_listing(out)
    assert unchecked >= {"sm_35", "sm_37"}
    assert as_cuobjdump_names(r["sass"]) - unchecked == sass and set(r["ptx"]) == ptx_


@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize("cuda", ["13.0", "13.2", "13.3"])
def test_matrix_ptx_isa_rows_match_what_nvcc_writes(cuda):
    """The ptx_isa_versions row of a CUDA release is the .version its nvcc (from PyPI) writes."""
    from tests.facts.fatbin_support import ptx_isa_written_by
    from tests.rules.helpers import matrix

    rows = [r for r in matrix().rows("ptx_isa_versions") if r["min_cuda"] == cuda]
    assert [r["ptx_isa"] for r in rows] == [ptx_isa_written_by(cuda)]


try:
    from imagelint.facts._hitscan import find as _native_find
except ImportError:  # built without the C extension: fatbin.py searches with bytes.find
    _native_find = None
_MAGIC8 = struct.pack("<IHH", 0xBA55ED50, 1, 16)


@pytest.mark.skipif(_native_find is None, reason="the C extension is not built")
@settings(max_examples=500, deadline=None)
@given(data=st.binary(max_size=80) | st.lists(st.sampled_from([b"\x00", b"\xed", b"P", b"\xedU", _MAGIC8[:5], _MAGIC8]),
                                              max_size=20).map(b"".join),
       needle=st.sampled_from([_MAGIC8, _MAGIC8[:1], _MAGIC8[1:3], b"\x00\x00"]) | st.binary(min_size=1, max_size=4),
       start=st.integers(-3, 90), anchor_seed=st.integers(0, 7))
def test_the_native_magic_search_is_bytes_find(data, needle, start, anchor_seed):
    """The fatbin search's memchr-anchored find gives bytes.find's answer at every anchor and start."""
    assert _native_find(data, needle, start, anchor_seed % len(needle)) == data.find(needle, max(start, 0))
