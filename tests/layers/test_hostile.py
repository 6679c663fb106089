"""Property tests: hostile bytes only ever raise imagelint errors, never crash or hang."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from imagelint.errors import ImagelintError
from imagelint.layers.filesystem import ImageFilesystem
from imagelint.layers.limits import ReadLimits
from imagelint.layers.match import RuleMatcher, compile_glob
from imagelint.layers.model import CaptureRule
from imagelint.layers.codec import extract_from_bytes, extract_to_bytes
from imagelint.layers.reader import extract_layer
from tests.layers.helpers import blob_layer, file_info, spec_of
from tests.support.imagebuilder import File, Hardlink, Opaque, RawMember, Symlink, Whiteout, compress, layer_tar

SPEC = spec_of(("**/version.json", "content", 4096), ("**/*.so*", "head", 64), ("**", "record"))
LIMITS = ReadLimits(max_layer_inflated_bytes=8 << 20, max_members_per_layer=10_000,
                    max_captured_bytes_per_layer=1 << 20, max_extension_header_bytes=64 << 10)
VALID_TAR = layer_tar([
    File("usr/local/cuda-12.4/version.json", b'{"cuda": {"version": "12.4.1"}}'),
    Symlink("usr/local/cuda", "cuda-12.4"),
    File("usr/lib/libcuda.so.1", b"\x7fELF" + bytes(300)),
    Hardlink("usr/lib/libcuda.so", "usr/lib/libcuda.so.1"),
    Whiteout("usr/lib/old"),
    Opaque("opt"),
    File("usr/share/" + "long-name-" * 20, b"pax"),
    RawMember(file_info("../../etc/passwd", 3), b"abc"),
])
# IMAGELINT_FUZZ_EXAMPLES=2000 for a longer local run; CI keeps it to a few seconds.
SETTINGS = settings(max_examples=int(os.environ.get("IMAGELINT_FUZZ_EXAMPLES", "60")), deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _extract_only_imagelint_errors(blob: bytes, compression: str) -> None:
    try:
        x = extract_layer(blob_layer(0, blob, compression), SPEC, LIMITS)
    except ImagelintError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("layer 0 (")
        return
    ImageFilesystem.from_extracts([x])
    assert extract_from_bytes(extract_to_bytes(x)) == x


@SETTINGS
@given(st.binary(max_size=4096), st.sampled_from(["gzip", "zstd", "none", "unknown"]))
def test_random_bytes_raise_only_imagelint_errors(blob: bytes, compression: str) -> None:
    _extract_only_imagelint_errors(blob, compression)


@SETTINGS
@given(
    st.sampled_from(["gzip", "zstd", "none"]),
    st.lists(st.tuples(st.integers(min_value=0), st.integers(min_value=0, max_value=255)), min_size=1, max_size=8),
    st.one_of(st.none(), st.integers(min_value=0)),
)
def test_corrupted_valid_layers_raise_only_imagelint_errors(compression: str, flips: list, cut: int | None) -> None:
    blob = bytearray(compress(VALID_TAR, compression))
    for pos, value in flips:
        blob[pos % len(blob)] = value
    if cut is not None:
        blob = blob[: cut % (len(blob) + 1)]
    _extract_only_imagelint_errors(bytes(blob), compression)


@SETTINGS
@given(st.lists(st.integers(min_value=0, max_value=len(VALID_TAR) - 1), min_size=1, max_size=6),
       st.binary(min_size=1, max_size=12))
def test_corrupted_tar_headers_raise_only_imagelint_errors(positions: list[int], junk: bytes) -> None:
    # Corrupt the plain tar, then fix nothing: checksums, numbers, pax records all see garbage.
    tar = bytearray(VALID_TAR)
    for pos in positions:
        tar[pos : pos + len(junk)] = junk
    _extract_only_imagelint_errors(bytes(tar), "none")


_GLOB_ALPHABET = st.sampled_from(["a", "b", "lib", ".so", "/", "*", "**/", "**", "?", "[ab]", "[!a]", "[!/]", "[a/]", "[", "]", "1"])


@SETTINGS
@given(st.lists(st.lists(_GLOB_ALPHABET, min_size=1, max_size=6).map("".join), min_size=1, max_size=6),
       st.lists(st.lists(st.sampled_from(["a", "b", "lib", ".so", "/", "1", "x"]), max_size=8).map("".join),
                max_size=10))
def test_rule_index_agrees_with_trying_every_rule(patterns: list[str], paths: list[str]) -> None:
    rules = [CaptureRule(p) for p in patterns]
    matcher = RuleMatcher(rules)
    for path in paths:
        expected = next((r for r in rules if compile_glob(r.pattern).fullmatch(path)), None)
        assert matcher.match(path) is expected
