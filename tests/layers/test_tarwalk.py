from __future__ import annotations

import io
import tarfile

import pytest

from imagelint.errors import ImageFormatError, LimitExceededError
from imagelint.layers.tarwalk import BLOCK, TarWalker
from tests.layers.helpers import file_info, gnu_tar
from tests.support.imagebuilder import Dir, File, Hardlink, RawMember, Special, Symlink, layer_tar

LONG = "usr/local/" + "/".join(f"very-long-directory-name-{i:02d}" for i in range(8)) + "/libcudart.so.12"


def walk(tar: bytes, read: bool = True, **kwargs) -> list[tuple]:
    walker = TarWalker(io.BytesIO(tar), "layer 0", **kwargs)
    out = []
    for m in walker:
        data = walker.read_data() if read else None
        out.append((m.name, m.type, m.size, m.mode, m.linkname, data))
    return out


def test_members_match_tarfile_for_every_kind() -> None:
    tar = layer_tar([
        Dir("usr/lib"),
        File("usr/lib/libcuda.so.535.104.05", b"\x7fELF" + b"x" * 1000, mode=0o755),
        Symlink("usr/lib/libcuda.so.1", "libcuda.so.535.104.05"),
        Hardlink("usr/lib/hard", "usr/lib/libcuda.so.535.104.05"),
        Special("dev/nvidia0", "chr"),
        Special("run/fifo", "fifo"),
        File(LONG, b"pax long name"),
    ])
    got = walk(tar)
    with tarfile.open(fileobj=io.BytesIO(tar)) as tf:
        expected = [
            (ti.name + ("/" if ti.isdir() else ""), ti.type.decode(), ti.size if ti.isreg() else 0, ti.mode,
             ti.linkname, tf.extractfile(ti).read() if ti.isreg() else b"")
            for ti in tf
        ]
    assert got == expected
    assert got[6][0] == LONG and len(LONG) > 100


def test_gnu_long_names_and_long_link_names() -> None:
    target = LONG.replace("libcudart", "libcudart-target")
    tar = gnu_tar([
        (file_info(LONG, 3), b"abc"),
        (file_info(LONG + ".1", type_=tarfile.SYMTYPE, linkname=target), b""),
    ])
    assert b"././@LongLink" in tar
    assert walk(tar) == [(LONG, "0", 3, 0o644, "", b"abc"), (LONG + ".1", "2", 0, 0o644, target, b"")]


def test_ustar_prefix_field() -> None:
    name = "a" * 120 + "/libnvidia-ml.so.1"
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tf:
        tf.addfile(file_info(name, 2), io.BytesIO(b"ok"))
    assert walk(buf.getvalue()) == [(name, "0", 2, 0o644, "", b"ok")]


def test_pax_global_header_applies_to_following_members() -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT, pax_headers={"comment": "x"}) as tf:
        tf.addfile(file_info("a", 1), io.BytesIO(b"1"))
    tar = buf.getvalue()
    assert tar[156:157] == b"g"
    assert walk(tar) == [("a", "0", 1, 0o644, "", b"1")]
    # A global 'path' renames what follows (that is what the standard says; tarfile ignores it).
    record = b"13 path=glob\n"
    header = tarfile.TarInfo("pax_global_header")
    header.type = tarfile.XGLTYPE
    header.size = len(record)
    raw = header.tobuf(tarfile.USTAR_FORMAT) + record.ljust(BLOCK, b"\0")
    assert walk(raw + layer_tar([File("b", b"2")]))[0][0] == "glob"


def test_base256_size_field() -> None:
    header = bytearray(file_info("big", 5).tobuf(tarfile.USTAR_FORMAT))
    header[124:136] = b"\x80" + (5).to_bytes(11, "big")
    header[148:156] = b" " * 8
    header[148:156] = b"%06o\0 " % sum(header)
    tar = bytes(header) + b"hello".ljust(BLOCK, b"\0") + bytes(1024)
    assert walk(tar) == [("big", "0", 5, 0o644, "", b"hello")]


def test_partial_reads_then_skip_keep_the_stream_aligned() -> None:
    tar = layer_tar([File("a", bytes(range(256)) * 10), File("b", b"second")])
    walker = TarWalker(io.BytesIO(tar), "layer 0")
    first = next(walker)
    assert walker.read_data(4) == bytes(range(4))
    chunks = list(walker.iter_data(1000))
    assert [len(c) for c in chunks] == [1000, 1000, 556]
    assert first.name == "a"
    second = next(walker)
    assert (second.name, walker.read_data()) == ("b", b"second")
    assert list(walker) == [] and walker.ended_cleanly


def test_invalid_utf8_names_are_replaced_not_fatal() -> None:
    info = file_info("x", 1)
    info.name = "caf\udce9/lib\udcff.so"  # surrogateescape'd bytes 0xe9, 0xff: not UTF-8
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT, encoding="utf-8", errors="surrogateescape") as tf:
        tf.addfile(info, io.BytesIO(b"z"))
    walker = TarWalker(io.BytesIO(buf.getvalue()), "layer 0")
    member = next(walker)
    assert member.name == "caf\ufffd/lib\ufffd.so" and member.name_invalid
    member.name.encode("utf-8")  # printable anywhere


def test_truncated_member_data() -> None:
    tar = layer_tar([File("a", b"x" * 5000)])
    with pytest.raises(ImageFormatError, match=r"layer 0: truncated layer .*'a' claims more data"):
        walk(tar[:3000], read=False)
    with pytest.raises(ImageFormatError, match="truncated layer"):
        walk(tar[:3000], read=True)
    with pytest.raises(ImageFormatError, match="truncated layer .*partial tar header"):
        walk(tar[:100])


def test_member_claiming_more_than_the_stream() -> None:
    info = file_info("liar", 10 << 30)
    tar = info.tobuf(tarfile.GNU_FORMAT) + b"short"
    with pytest.raises(ImageFormatError, match="truncated layer"):
        walk(tar, read=False)


def test_not_a_tar_archive() -> None:
    with pytest.raises(ImageFormatError, match="layer 0: not a tar archive"):
        walk(b"PK\x03\x04" + bytes(1020))
    with pytest.raises(ImageFormatError, match="not a tar archive"):
        walk(b"{\"json\": true}".ljust(512, b" "))
    with pytest.raises(ImageFormatError, match="not a tar archive"):
        walk(b"")


def test_bad_checksum_in_a_later_header() -> None:
    tar = bytearray(layer_tar([File("a", b"1"), File("b", b"2")]))
    second = tar.index(b"b\0", 1024 - 1)  # PAX format: a, b headers at 0 and 1024
    tar[second] = ord("c")
    with pytest.raises(ImageFormatError, match="corrupt tar header .*bad header checksum"):
        walk(bytes(tar))


def test_pax_header_size_is_bounded() -> None:
    info = file_info("x" * 50, 0)
    info.pax_headers = {"comment": "y" * 5000}
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        tf.addfile(info)
    with pytest.raises(LimitExceededError, match="extended header of .* bytes exceeds 4096"):
        walk(buf.getvalue(), max_extension_bytes=4096)


def test_member_count_is_bounded() -> None:
    tar = layer_tar([File(f"f{i}") for i in range(20)])
    assert len(walk(tar, max_members=20)) == 20
    with pytest.raises(LimitExceededError, match="more than 10 tar members"):
        walk(tar, max_members=10)


def test_link_and_directory_sizes_are_ignored_like_go_archive_tar() -> None:
    info = file_info("d/", 4096, tarfile.DIRTYPE)
    tar = info.tobuf(tarfile.GNU_FORMAT) + layer_tar([File("after", b"ok")])
    assert [(n, d) for n, _, _, _, _, d in walk(tar)] == [("d/", b""), ("after", b"ok")]


def test_raw_member_with_hostile_name_is_reported_verbatim() -> None:
    info = file_info("../../etc/passwd", 4)
    assert walk(layer_tar([RawMember(info, b"root")])) == [("../../etc/passwd", "0", 4, 0o644, "", b"root")]
