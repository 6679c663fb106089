from __future__ import annotations

import pytest

from imagelint.layers.filesystem import ImageFilesystem
from imagelint.layers.model import DIRECTORY, FILE, HARDLINK, SYMLINK
from imagelint.layers.reader import read_image_filesystem
from tests.layers.helpers import built_image, spec_of
from tests.support.imagebuilder import Dir, File, Hardlink, Opaque, Symlink, Whiteout

VERSION_JSON = b'{"cuda": {"version": "12.4.1"}}'
SPEC = spec_of(
    ("usr/local/cuda*/version.json", "content", 4096),
    ("usr/local/cuda*/version.txt", "content", 4096),
    ("**/libcuda.so*", "record"),
    ("**/libnvidia-ml.so*", "head", 4),
    ("etc/passwd", "content"),
    ("usr/local/cuda*", "record"),
    ("opt/conda/**", "content"),
)


def fs_of(*layers, compression: str = "gzip") -> ImageFilesystem:
    return read_image_filesystem(built_image(layers, compression), SPEC)


def test_whiteout_removes_then_later_layer_readds() -> None:
    lib = "usr/lib/x86_64-linux-gnu/libcuda.so.1"
    base = [File(lib, b"driver"), File("usr/lib/x86_64-linux-gnu/libcuda.so.535.1", b"d")]
    assert fs_of(base).entry(lib) is not None
    removed = fs_of(base, [Whiteout(lib)])
    assert removed.entry(lib) is None and removed.lookup("/" + lib) is None
    assert removed.entry("usr/lib/x86_64-linux-gnu/libcuda.so.535.1") is not None  # siblings stay
    back = fs_of(base, [Whiteout(lib)], [File(lib, b"again")])
    assert back.entry(lib).layer_index == 2


def test_whiteout_of_a_directory_removes_everything_below() -> None:
    fs = fs_of(
        [File("usr/local/cuda-11.8/version.json", b"{}"), Symlink("usr/local/cuda", "cuda-11.8")],
        [Whiteout("usr/local/cuda-11.8"), Whiteout("usr/local/cuda")],
    )
    assert list(fs.entries()) == []
    assert fs.resolve("usr/local/cuda/version.json") is None


def test_whiteout_in_the_same_layer_does_not_hide_that_layers_entries() -> None:
    fs = fs_of([File("usr/local/cuda-12.4/version.json", b"old")],
               [File("usr/local/cuda-12.4/version.json", b"new"), Whiteout("usr/local/cuda-12.4/version.json")])
    assert fs.read("usr/local/cuda-12.4/version.json") == b"new"


def test_opaque_dir_hides_lower_content_but_keeps_its_own_layer() -> None:
    fs = fs_of(
        [File("usr/local/cuda-12.4/version.json", b"lower"), File("usr/local/cuda-12.4/version.txt", b"lower"),
         File("usr/local/cuda-11.8/version.json", b"sibling")],
        [Opaque("usr/local/cuda-12.4"), File("usr/local/cuda-12.4/version.json", b"upper")],
    )
    assert fs.read("usr/local/cuda-12.4/version.json") == b"upper"
    assert fs.entry("usr/local/cuda-12.4/version.txt") is None
    assert fs.read("usr/local/cuda-11.8/version.json") == b"sibling"
    # The opaque marker after the layer's own entry (tar order) still keeps it.
    fs = fs_of([File("usr/local/cuda-12.4/version.txt", b"lower")],
               [File("usr/local/cuda-12.4/version.json", b"upper"), Opaque("usr/local/cuda-12.4")])
    assert fs.listdir("usr/local/cuda-12.4") == ["version.json"]


def test_a_file_or_link_replacing_a_directory_hides_what_was_below() -> None:
    fs = fs_of([File("usr/local/cuda/version.json", b"real dir")],
               [Symlink("usr/local/cuda", "cuda-12.4"), File("usr/local/cuda-12.4/version.json", VERSION_JSON)])
    assert fs.entry("usr/local/cuda/version.json") is None
    assert fs.read("usr/local/cuda/version.json") == VERSION_JSON


@pytest.mark.parametrize("compression", ["gzip", "zstd"])
def test_symlink_chain_through_alternatives_to_version_json(compression: str) -> None:
    fs = fs_of(
        [Dir("usr/local/cuda-12.4"), File("usr/local/cuda-12.4/version.json", VERSION_JSON)],
        [Symlink("etc/alternatives/cuda", "/usr/local/cuda-12.4"), Symlink("usr/local/cuda", "/etc/alternatives/cuda"),
         Symlink("usr/local/cuda-12", "../../etc/alternatives/cuda")],
        compression=compression,
    )
    for via in ("/usr/local/cuda/version.json", "usr/local/cuda-12/version.json",
                "usr/local/cuda/../cuda/./version.json", "/etc/alternatives/cuda/version.json"):
        assert fs.resolve(via) == "usr/local/cuda-12.4/version.json", via
        assert fs.read(via) == VERSION_JSON
        assert fs.lookup(via).path == "usr/local/cuda-12.4/version.json"
    assert fs.entry("usr/local/cuda").kind == SYMLINK  # entry() never follows links
    assert fs.entry("usr/local/cuda/version.json") is None
    assert fs.resolve("usr/local/cuda") == "usr/local/cuda-12.4"
    assert fs.aliases("/usr/local/cuda-12.4/version.json") == [
        "etc/alternatives/cuda/version.json", "usr/local/cuda-12.4/version.json",
        "usr/local/cuda-12/version.json", "usr/local/cuda/version.json",
    ]
    assert fs.aliases("usr/local/cuda/version.json") == fs.aliases("usr/local/cuda-12.4/version.json")
    assert fs.listdir("/usr/local/cuda") == ["version.json"]
    assert fs.listdir("usr/local") == ["cuda", "cuda-12", "cuda-12.4"]


def test_relative_symlink_through_a_directory_symlink() -> None:
    fs = fs_of(
        [File("opt/conda/pkgs/cuda-12.4/version.json", VERSION_JSON),
         Symlink("opt/conda/current", "pkgs/cuda-12.4"),
         Symlink("usr/local/cuda-12.4", "../../opt/conda/current")],
    )
    assert fs.resolve("usr/local/cuda-12.4/version.json") == "opt/conda/pkgs/cuda-12.4/version.json"
    assert "usr/local/cuda-12.4/version.json" in fs.aliases("opt/conda/pkgs/cuda-12.4/version.json")


def test_symlink_loops_and_dangling_links_resolve_to_none() -> None:
    fs = fs_of([Symlink("usr/local/cuda", "cuda-a"), Symlink("usr/local/cuda-a", "cuda"),
                Symlink("usr/lib/libcuda.so", "libcuda.so"), Symlink("usr/lib/libcuda.so.1", "libcuda.so.missing"),
                Symlink("usr/lib/libcuda.so.2", "")])
    assert fs.resolve("usr/local/cuda/version.json") is None
    assert fs.resolve("usr/local/cuda") is None
    assert fs.resolve("usr/lib/libcuda.so") is None
    assert fs.resolve("usr/lib/libcuda.so.1") is None
    assert fs.resolve("usr/lib/libcuda.so.2") is None
    assert fs.lookup("usr/lib/libcuda.so") is None and fs.read("usr/local/cuda/version.json") is None
    assert fs.aliases("usr/local/cuda") == []


def test_forty_hops_are_followed_but_not_forty_one() -> None:
    chain = [Symlink(f"usr/lib/libcuda.so.{i}", f"libcuda.so.{i + 1}") for i in range(40)]
    fs = fs_of(chain + [File("usr/lib/libcuda.so.40", b"end")])
    assert fs.resolve("usr/lib/libcuda.so.0") == "usr/lib/libcuda.so.40"
    fs = fs_of([Symlink("usr/lib/libcuda.so.x", "libcuda.so.0")] + chain + [File("usr/lib/libcuda.so.40", b"end")])
    assert fs.resolve("usr/lib/libcuda.so.x") is None


def test_links_out_of_root_stay_inside_the_image() -> None:
    fs = fs_of([File("etc/passwd", b"image-root:x:0:0\n"),
                Symlink("usr/local/cuda-evil", "../../../../etc"),
                Symlink("usr/lib/libcuda.so.1", "../../../../../../../../etc/passwd"),
                Symlink("usr/lib/libcuda.so.2", "/../../etc/passwd")])
    assert fs.resolve("usr/lib/libcuda.so.1") == "etc/passwd"
    assert fs.read("usr/lib/libcuda.so.1") == b"image-root:x:0:0\n"
    assert fs.read("usr/lib/libcuda.so.2") == b"image-root:x:0:0\n"
    assert fs.read("usr/local/cuda-evil/passwd") == b"image-root:x:0:0\n"
    assert fs.resolve("../../etc/passwd") == "etc/passwd"


def test_hardlinks_read_their_target_even_after_the_target_changes() -> None:
    fs = fs_of(
        [File("opt/conda/lib/libcudart.so.12.4.127", b"cudart-12.4"),
         Hardlink("opt/conda/pkgs/libcudart.so.12", "opt/conda/lib/libcudart.so.12.4.127")],
        [Whiteout("opt/conda/lib/libcudart.so.12.4.127")],
    )
    assert fs.entry("opt/conda/pkgs/libcudart.so.12").kind == HARDLINK
    assert fs.lookup("opt/conda/pkgs/libcudart.so.12").kind == FILE
    assert fs.lookup("opt/conda/pkgs/libcudart.so.12").path == "opt/conda/lib/libcudart.so.12.4.127"
    assert fs.read("/opt/conda/pkgs/libcudart.so.12") == b"cudart-12.4"
    assert fs.entry("opt/conda/lib/libcudart.so.12.4.127") is None


def test_hardlink_to_an_unrecorded_target_is_still_visible_with_a_warning() -> None:
    fs = fs_of([File("usr/lib/private/blob", b"x"), Hardlink("usr/lib/libcuda.so.1", "usr/lib/private/blob")])
    assert fs.lookup("usr/lib/libcuda.so.1").kind == HARDLINK
    assert fs.read("usr/lib/libcuda.so.1") is None
    assert fs.warnings == ("hardlink 'usr/lib/libcuda.so.1' -> 'usr/lib/private/blob': target not recorded, "
                           "so its content is not available",)


def test_head_glob_entries_and_truncated() -> None:
    fs = fs_of([File("usr/lib/libnvidia-ml.so.535.104.05", b"\x7fELF-the-rest"),
                Symlink("usr/lib/libnvidia-ml.so.1", "libnvidia-ml.so.535.104.05"),
                File("usr/lib/libcuda.so.1", b""),
                File("usr/local/cuda-12.4/version.txt", b"x" * 5000)])
    assert fs.head("usr/lib/libnvidia-ml.so.1") == b"\x7fELF"
    assert fs.read("usr/lib/libnvidia-ml.so.1") is None
    assert [e.path for e in fs.glob("/usr/lib/lib*.so.1")] == ["usr/lib/libcuda.so.1", "usr/lib/libnvidia-ml.so.1"]
    assert [e.path for e in fs.glob("**/version.txt")] == ["usr/local/cuda-12.4/version.txt"]
    assert [e.path for e in fs.entries()] == sorted(e.path for e in fs.entries())
    assert fs.truncated("usr/local/cuda-12.4/version.txt") and fs.read("usr/local/cuda-12.4/version.txt") is None
    assert fs.scan("usr/lib/libcuda.so.1") is None


def test_listdir_of_missing_or_non_directory() -> None:
    fs = fs_of([File("usr/local/cuda-12.4/version.json", VERSION_JSON)])
    assert fs.listdir("nope") == []
    assert fs.listdir("usr/local/cuda-12.4/version.json") == []
    assert fs.listdir("/") == ["usr"]


def test_aliases_are_bounded_for_self_referencing_directory_links() -> None:
    fs = fs_of([File("usr/lib/libcuda.so.1", b""), Symlink("usr/lib/again", "."), Symlink("usr/lib/up", "..")])
    aliases = fs.aliases("usr/lib/libcuda.so.1")
    assert "usr/lib/again/libcuda.so.1" in aliases and "usr/lib/up/lib/libcuda.so.1" in aliases
    assert len(aliases) <= 256 and all(fs.resolve(a) == "usr/lib/libcuda.so.1" for a in aliases)


def test_warnings_are_collected_from_extracts() -> None:
    from tests.layers.helpers import file_info
    from tests.support.imagebuilder import RawMember

    fs = fs_of([RawMember(file_info("../../escape"))])
    assert len(fs.warnings) == 1 and "escapes the root" in fs.warnings[0]


def test_a_directory_in_an_upper_layer_replaces_a_lower_symlink() -> None:
    # Layer 1 makes usr/lib/nv a real (unrecorded) directory where layer 0 had a symlink.
    fs = fs_of(
        [File("usr/lib/real/libcuda.so.1", b"old"), Symlink("usr/lib/nv", "real")],
        [Dir("usr/lib/nv"), File("usr/lib/nv/libcuda.so.1", b"new")],
    )
    assert fs.entry("usr/lib/nv") is None  # the link is gone
    assert fs.resolve("usr/lib/nv/libcuda.so.1") == "usr/lib/nv/libcuda.so.1"
    assert fs.lookup("usr/lib/nv/libcuda.so.1").layer_index == 1
    assert fs.lookup("usr/lib/real/libcuda.so.1").layer_index == 0
    # The same with a recorded directory: the directory entry itself replaces the link.
    fs = fs_of(
        [File("usr/local/cuda-11.8/version.json", b"11.8"), Symlink("usr/local/cuda", "cuda-11.8")],
        [Dir("usr/local/cuda"), File("usr/local/cuda/version.json", b"real")],
    )
    assert fs.entry("usr/local/cuda").kind == DIRECTORY
    assert fs.read("usr/local/cuda/version.json") == b"real"
    # An opaque marker also says "this is a directory in this layer".
    fs = fs_of([Symlink("usr/lib/nv", "real"), File("usr/lib/real/libcuda.so.1", b"old")], [Opaque("usr/lib/nv")])
    assert fs.entry("usr/lib/nv") is None and fs.resolve("usr/lib/nv/libcuda.so.1") is None


# -- glob narrowing and the resolve shortcut against the plain definitions ---------------

from hypothesis import example, given, settings, strategies as st  # noqa: E402

from imagelint.layers.match import compile_glob  # noqa: E402
from imagelint.layers.model import Entry, LayerExtract  # noqa: E402

_NAMES = st.sampled_from(["a", "b", "lib", "libcuda.so", "libcuda.so.1", "x.so.12", "cuda-12", "cuda",
                          "version.json", ".hidden", "[x]", "a]b", "*", "v.tar.gz", "METADATA", "s[o"])
_PATHS = st.lists(_NAMES, min_size=1, max_size=4).map("/".join)
_GLOB_PARTS = st.sampled_from(["*", "**", "?", "a", "lib", "cuda*", "*.so", "*.so.[0-9]*", "libcuda.so*",
                               "[!a]*", "[]a]*", "*[x]", "*.json", "version.json", "*.gz", "*.tar.gz",
                               "s[o", "*a]b", "[!]x]*", "x.so.*", "*.", "cuda-[0-9]*"])
_GLOBS = st.lists(_GLOB_PARTS, min_size=1, max_size=4).map("/".join)


def _merged(paths: list[str], links: list[tuple[str, str]]) -> ImageFilesystem:
    entries = [Entry(p, FILE, 1, 0o644, None, 0, "sha256:0") for p in paths]
    entries += [Entry(p, SYMLINK, 0, 0o777, target, 0, "sha256:0") for p, target in links]
    return ImageFilesystem.from_extracts([LayerExtract(0, "sha256:0", tuple(entries))])


@settings(max_examples=300, deadline=None)
@given(st.lists(_PATHS, min_size=1, max_size=25), st.lists(st.tuples(_PATHS, _PATHS), max_size=4), _GLOBS,
       st.booleans())
@example(["a", "x/a]b", "x/]q", "x/b"], [], "**/[]a]*", False)  # a class that holds ']'
@example(["a", "x/a]b", "x/]q", "x/b"], [], "*/[!]x]*", False)
@example(["lib/x.so.12", "lib/x.so"], [], "**/*.so.[0-9]*", True)
@example(["v.tar.gz", "d/v.gz"], [], "**/*.tar.gz", False)
def test_glob_gives_what_matching_every_path_gives(paths, links, pattern, leading_slash) -> None:
    fs = _merged(paths, links)
    regex = compile_glob(pattern)
    every = [e for e in fs.entries() if regex.fullmatch(e.path)]
    assert fs.glob("/" + pattern if leading_slash else pattern) == every


@settings(max_examples=300, deadline=None)
@given(st.lists(_PATHS, min_size=1, max_size=25), st.lists(st.tuples(_PATHS, _PATHS), max_size=4),
       st.lists(_PATHS, max_size=6))
def test_resolve_shortcut_agrees_with_the_walk(paths, links, queries) -> None:
    fs = _merged(paths, links)
    for query in [*paths, *[p for p, _ in links], *queries, "", "a/../a", "./a", "a//b"]:
        assert fs.resolve(query) == fs._walk(query.lstrip("/")), query


def test_component_split_of_a_layer_agrees_with_the_path_by_path_one() -> None:
    """The one-scan shortcut (every path already normalised: a path is then its parent directory
    and name as they stand) gives each path the parent and name its components give."""
    from imagelint.layers.filesystem import _key_parts, _parts, _split_all

    odd = ["/abs", "a//b", "a/./b", "a/../b", "./a", "../a", "a/", "a/.", "a/..", ".", "..", "", "/", "a\n/b",
           "a/\n.b", "x\n", "\n", ".hidden/x", "a/.hidden", "a/b..c", "a.b/c.", "é/ü"]
    plain = ["usr/lib/x.so", "opt/a/b", "etc/ld.so.conf", "a.b/c.d", "usr/bin/python3.11"]
    for batch in ([*plain], [*plain, *odd], odd, [], [""], ["a"], *([p] for p in odd), *([*plain, p] for p in odd),
                  *([p, *plain] for p in odd)):
        keys, names = _split_all(list(batch))
        expected = [_parts(p) for p in batch]
        assert [_key_parts(key) for key in keys] == [parts[:-1] for parts in expected], batch
        assert names == [parts[-1] if parts else None for parts in expected], batch


def _overlay_model(layers: list[LayerExtract]) -> dict[str, tuple[int, str]]:
    """The merge rules of ``from_extracts``' docstring over a flat path → (layer, kind) map:
    the reference the tree is held to."""
    from imagelint.layers.filesystem import _normalize

    seen: dict[str, tuple[int, str]] = {}

    def drop_below(path: str, itself: bool) -> None:
        for key in [k for k in seen if k.startswith(path + "/") or (itself and k == path)]:
            del seen[key]

    for x in layers:
        for path in x.whiteouts:
            drop_below(_normalize(path), itself=True)
        for path in x.opaque_dirs:
            drop_below(_normalize(path), itself=False)
        for e in x.entries:
            if e.kind != DIRECTORY:
                drop_below(_normalize(e.path), itself=False)
        dirs = {_normalize(p).rpartition("/")[0] for p in (*x.whiteouts, *(e.path for e in x.entries))}
        dirs |= {_normalize(p) for p in x.opaque_dirs}
        for d in dirs:
            parts = d.split("/") if d else []
            for i in range(1, len(parts) + 1):  # the directory and its ancestors are directories now
                ancestor = "/".join(parts[:i])
                if ancestor in seen and seen[ancestor][1] != DIRECTORY:
                    del seen[ancestor]
        for e in x.entries:
            seen[_normalize(e.path)] = (x.index, e.kind)
    return seen


def test_merge_agrees_with_the_flat_model_on_random_layer_stacks() -> None:
    """Layers that replace, shadow, white out and re-add each other's paths, in normalised and
    odd spellings: the merged tree's visible records are the flat model's."""
    import random

    rng = random.Random(16)
    names = ["a", "b", "c", "d"]
    for _ in range(400):
        layers = []
        for index in range(rng.randint(1, 5)):
            def path() -> str:
                p = "/".join(rng.choice(names) for _ in range(rng.randint(1, 4)))
                return rng.choice([p, p, p, "./" + p, p + "/", "/" + p, p.replace("/", "//", 1)])
            kinds = [rng.choice([FILE, FILE, DIRECTORY, SYMLINK]) for _ in range(rng.randint(0, 8))]
            entries = tuple(Entry(path(), kind, 0, 0o644, "a" if kind == SYMLINK else None, index, f"sha256:{index}")
                            for kind in kinds)
            whiteouts = tuple(path() for _ in range(rng.randint(0, 2)))
            opaque = tuple(path() for _ in range(rng.randint(0, 1)))
            layers.append(LayerExtract(index=index, digest=f"sha256:{index}", entries=entries,
                                       whiteouts=whiteouts, opaque_dirs=opaque))
        merged = ImageFilesystem.from_extracts(layers)
        got = {path: (r.entry.layer_index, r.entry.kind) for path, r in merged._records.items() if path}
        assert got == _overlay_model(layers), layers
