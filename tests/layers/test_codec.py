"""imagelint.layers.codec: the layer cache's encoding, exact both ways, and every field of a forged entry checked."""

from __future__ import annotations

import json
import struct
import zlib
from types import MappingProxyType

import pytest

from imagelint.errors import ImageFormatError
from imagelint.layers.codec import extract_from_bytes, extract_to_bytes
from imagelint.layers.model import DIRECTORY, FILE, HARDLINK, SYMLINK, Entry, LayerExtract

_HEAD = struct.Struct(">4sIIQ")
SHARED = {"text": 1, "unread_from": 4096}


def _extract() -> LayerExtract:
    d = "sha256:" + "a" * 64
    entries = (
        Entry("opt", DIRECTORY, 0, 0o755, None, 2, d),
        Entry("opt/a.txt", FILE, 40_000, 0o644, None, 2, d),
        Entry("opt/b.txt", FILE, 41_000, 0o644, None, 2, d),
        Entry("opt/run.sh", FILE, 900, 0o755, None, 2, d),
        Entry("opt/link", SYMLINK, 0, 0o777, "run.sh", 2, d),
        Entry("opt/hard", HARDLINK, 0, 0o644, "opt/a.txt", 2, d),
        Entry("opt/moved", FILE, 1, 0o600, None, 5, "sha256:" + "b" * 64),  # another layer's (re-indexed)
    )
    script = "#!/bin/sh\nexport CUDA_VISIBLE_DEVICES=0\n" * 20
    scans = {"opt/a.txt": SHARED, "opt/b.txt": SHARED, "opt/run.sh": {"text": 1, "lang": "shell", "sh": script},
             "no/entry.txt": SHARED}
    return LayerExtract(2, d, entries, whiteouts=("opt/gone",), opaque_dirs=("var",), scans=MappingProxyType(scans),
                        contents=MappingProxyType({"opt/moved": b"x"}), heads=MappingProxyType({"opt/run.sh": b"#!"}),
                        truncated=("opt/b.txt",), warnings=("layer 2: a warning",))


def _meta(blob: bytes) -> tuple[dict, bytes, tuple]:
    header = _HEAD.unpack_from(blob)
    body = zlib.decompress(blob[_HEAD.size:])
    return json.loads(body[: header[2]]), body[header[2]:], header


def _forge(meta: dict, blobs: bytes, header: tuple) -> bytes:
    text = json.dumps(meta, separators=(",", ":")).encode()
    body = text + blobs
    return _HEAD.pack(header[0], header[1], len(text), len(body)) + zlib.compress(body)


def test_an_extract_comes_back_equal_and_shared_results_shared() -> None:
    x = _extract()
    y = extract_from_bytes(extract_to_bytes(x))
    assert y == x
    assert y.entries[-1].layer_index == 5 and y.entries[4].linkname == "run.sh" and y.entries[0].linkname is None
    assert y.scans["opt/a.txt"] is y.scans["opt/b.txt"] is y.scans["no/entry.txt"]  # one object, as the scanner made it
    meta, _, _ = _meta(extract_to_bytes(x))
    assert meta["results"].count(SHARED) == 1 and meta["layers"] == [[6, 5, "sha256:" + "b" * 64]]
    assert "sha256:" + "a" * 64 not in json.dumps(meta["paths"] + meta["kinds"])  # no digest per entry


def _bad(meta: dict, change) -> dict:  # noqa: ANN001
    meta = json.loads(json.dumps(meta))
    change(meta)
    return meta


@pytest.mark.parametrize("change", [
    lambda m: m["sizes"].__setitem__(1, True),
    lambda m: m["sizes"].__setitem__(1, "40000"),
    lambda m: m["modes"].__setitem__(1, 1.5),
    lambda m: m["kinds"].__setitem__(1, "socket"),
    lambda m: m["kinds"].__setitem__(1, ["file"]),
    lambda m: m["paths"].__setitem__(1, 7),
    lambda m: m["paths"].pop(),
    lambda m: m["links"].append([99, "x"]),
    lambda m: m["links"].append([1, None]),
    lambda m: m["layers"].append([-1, 0, "d"]),
    lambda m: m["layers"].append([1, "0", "d"]),
    lambda m: m["scans"].append([99, 0]),
    lambda m: m["scans"].append([1, 99]),
    lambda m: m["scans"].append([1.0, 0]),
    lambda m: m["scans"].append([]),
    lambda m: m["scans"].append([1, 0, [], "extra"]),
    lambda m: m.__setitem__("results", {}),
    lambda m: m.__setitem__("whiteouts", [1]),
    lambda m: m.__setitem__("warnings", "a warning"),
    lambda m: m.__setitem__("index", "2"),
    lambda m: m.pop("paths"),
    lambda m: m["contents"].append(["x", 10**9]),
])
def test_a_forged_field_is_a_corrupt_entry(change) -> None:  # noqa: ANN001
    meta, blobs, header = _meta(extract_to_bytes(_extract()))
    with pytest.raises(ImageFormatError, match="corrupt"):
        extract_from_bytes(_forge(_bad(meta, change), blobs, header))


def test_two_scans_pointing_at_one_row_with_strings_each_get_their_own_copy() -> None:
    meta, blobs, header = _meta(extract_to_bytes(_extract()))
    with_refs = next(item for item in meta["scans"] if len(item) == 3)
    n = with_refs[2][0][1]
    twin = [1, with_refs[1], [["sh", n]]]  # the same row, its string read again from the blobs
    meta["scans"].append(twin)
    script = blobs[-n:] if blobs.endswith(blobs[-n:]) else b""
    y = extract_from_bytes(_forge(meta, blobs + script, header))
    assert y.scans["opt/a.txt"] == y.scans["opt/run.sh"] and y.scans["opt/a.txt"] is not y.scans["opt/run.sh"]
