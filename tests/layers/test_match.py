from __future__ import annotations

import pytest

from imagelint.layers.match import RuleMatcher, compile_glob
from imagelint.layers.model import CaptureRule


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("usr/local/cuda*/version.json", "usr/local/cuda-12.4/version.json", True),
        ("usr/local/cuda*/version.json", "usr/local/cuda/version.json", True),
        ("usr/local/cuda*/version.json", "usr/local/cuda/x/version.json", False),  # * stops at '/'
        ("/usr/lib/*.so", "usr/lib/libx.so", True),  # leading '/' ignored
        ("**/libcuda.so*", "libcuda.so", True),  # **/ = zero directories
        ("**/libcuda.so*", "usr/lib/x86_64-linux-gnu/libcuda.so.1", True),
        ("usr/**/libcudart.so.*", "usr/libcudart.so.12", True),
        ("usr/**/libcudart.so.*", "usr/a/b/c/libcudart.so.12.4.127", True),
        ("usr/**/libcudart.so.*", "opt/usr/libcudart.so.12", False),
        ("opt/**", "opt/conda/lib/x", True),  # trailing ** crosses '/'
        ("lib?.so", "libx.so", True),
        ("lib?.so", "lib/.so", False),
        ("lib[0-9].so", "lib7.so", True),
        ("lib[!0-9].so", "lib7.so", False),
        ("lib[!0-9].so", "libx.so", True),
        ("a[.-0]b", "a/b", False),  # a class never matches '/', even through a range
        ("file[.txt", "file[.txt", True),  # unclosed '[' is literal
        ("a+b(c).so", "a+b(c).so", True),  # regex metacharacters are literal
        ("*.json", "dir/x.json", False),
    ],
)
def test_glob_semantics(pattern: str, path: str, matches: bool) -> None:
    assert bool(compile_glob(pattern).fullmatch(path)) is matches


def test_first_matching_rule_wins() -> None:
    narrow = CaptureRule("usr/local/cuda*/version.json", "content", 4096)
    broad = CaptureRule("**/*.json", "record")
    assert RuleMatcher([narrow, broad]).match("usr/local/cuda-12.4/version.json") is narrow
    assert RuleMatcher([broad, narrow]).match("usr/local/cuda-12.4/version.json") is broad
    assert RuleMatcher([narrow, broad]).match("etc/x.json") is broad
    assert RuleMatcher([narrow, broad]).match("etc/x.txt") is None
    assert RuleMatcher([]).match("anything") is None


def test_many_rules_and_paths_stay_cheap() -> None:
    rules = [CaptureRule(f"usr/lib/**/libthing{i}.so*") for i in range(200)]
    matcher = RuleMatcher(rules)
    paths = [f"usr/share/doc/pkg{i}/copyright" for i in range(60_000)]
    assert sum(matcher.match(p) is not None for p in paths) == 0
    assert matcher.match("usr/lib/x/libthing199.so.1") is rules[199]


def test_index_never_hides_a_matching_rule() -> None:
    rules = [
        CaptureRule("usr/local/cuda*/version.json", "content"),
        CaptureRule("**/*.dist-info", "record"),
        CaptureRule("**/libcudart.so*", "head"),
        CaptureRule("opt/**", "record"),
        CaptureRule("etc/[a-z]*release", "content"),
        CaptureRule("*", "record"),
    ]
    matcher = RuleMatcher(rules)
    paths = [
        "usr/local/cuda-12.4/version.json", "x/nvidia_cuda_runtime_cu12-12.4.127.dist-info", "libcudart.so.12",
        "opt/conda/bin/python", "etc/os-release", "toplevel", "usr/bin/env", "usr/lib/libcudart.so",
    ]
    for path in paths:
        expected = next((r for r in rules if compile_glob(r.pattern).fullmatch(path)), None)
        assert matcher.match(path) is expected, path


def test_the_capture_spec_index_agrees_with_trying_every_rule() -> None:
    from imagelint.facts.capture import CAPTURE_SPEC

    rules = CAPTURE_SPEC.rules
    matcher = RuleMatcher(rules)
    regexes = [compile_glob(r.pattern) for r in rules]
    dirs = ["", "usr/local/bin/", "usr/bin/", "opt/x/bin/", "opt/nvidia/", "opt/pytorch/a/b/", "app/", "app/deep/er/",
            "workspace/ex/", "etc/ld.so.conf.d/", "usr/local/cuda-12.4/", "usr/local/cuda-12.4/targets/x86_64-linux/lib/",
            "usr/lib/x86_64-linux-gnu/", "srv/", "home/u/", "usr/src/k/", "x/y.dist-info/", "lib/"]
    bases = ["entrypoint", "run.sh", "x.bash", "CMakeLists.txt", "c.yaml", "c.yml", "c.cfg", "c.conf", "c.ini", "m.py",
             "libcuda.so", "libcuda.so.1", "libcuda.so.550.54.15", "libfoo.so.1", "libfoo.so", "k.fatbin", "version.json",
             "version.txt", "METADATA", "nvidia_entrypoint.sh", "nvidia_entrypoint", "a.so.x", "ld.so.conf", "README",
             ".hidden", "libnvidia-ml.so.1", "libcudart.so.12", "a.json"]
    for d in dirs:
        for b in bases:
            path = d + b
            expected = next((rules[i] for i, r in enumerate(regexes) if r.fullmatch(path)), None)
            assert matcher.match(path) is expected, path


def test_a_bracket_without_its_close_in_the_same_component_is_literal() -> None:
    # A class never matches '/', so a ']' in a later component cannot close it.
    regex = compile_glob("s[o/cuda-[0-9]*")
    assert regex.fullmatch("s[o/cuda-12")
    assert not regex.fullmatch("so/cuda-12")
    assert compile_glob("a[b/c]").fullmatch("a[b/c]")


def test_paths_decided_by_their_top_directory_and_extension_get_what_every_rule_tried_gives() -> None:
    """A path whose rules are all ``LEAD/**/*SUFFIX`` of its top directory and extension is matched by
    its shape, worked out once: on random rule lists mixing those with rules that need the whole path
    (a longer suffix, a deeper lead, a basename prefix or infix, a top-level glob, a trailing ``**``),
    every path, asked in any order and again, gets the first rule whose regex matches it."""
    import random

    from imagelint.layers.match import deep_suffix

    assert deep_suffix("app/**/*.py") == ("app", ".py")
    assert deep_suffix("/**/*.so") == ("", ".so")
    assert deep_suffix("app/**/*") == ("app", "")
    assert deep_suffix("usr/lib/**/*.so") == ("usr/lib", ".so")
    for not_one in ("app/**/lib*.so", "app/*/x.py", "*.py", "app/**", "a[b]/**/*.py", "app/**/*.p?", "**/*/x"):
        assert deep_suffix(not_one) is None, not_one
    rng = random.Random(40)
    globs = ["app/**/*.py", "app/**/*", "**/*.so", "**/*.py", "app/**/*_pb2.py", "app/sub/**/*.py", "usr/**/*.h",
             "app/**/lib*.so", "**/*config.yaml", "**/*.yaml", "app/**/*.tar.gz", "**/*.gz", "*.py", "app/**",
             "app/**/*cuda*", "workspace/**/*", "usr/lib/**/*.so", "app/**/.env", "**/*."]
    dirs = ["app/", "app/sub/", "app/sub/deep/", "app/x.py/", "usr/", "usr/lib/", "workspace/", "opt/", "app/.git/"]
    bases = ["m.py", "m_pb2.py", "x.so", "libx.so", "c.yaml", "nvconfig.yaml", "a.tar.gz", "b.gz", "README", ".env",
             ".py", "cuda.txt", "mycudafile", "x.", "x..py", "lib.so.py", "t.h", "noext"]
    for _ in range(300):
        rules = [CaptureRule(g, "record") for g in rng.sample(globs, rng.randint(1, 8))]
        matcher = RuleMatcher(rules)
        regexes = [compile_glob(r.pattern) for r in rules]
        paths = [d + b for d in dirs for b in bases] + bases
        for path in rng.sample(paths, len(paths)) * 2:
            expected = next((rules[i] for i, r in enumerate(regexes) if r.fullmatch(path)), None)
            assert matcher.match(path) is expected, ([r.pattern for r in rules], path)
