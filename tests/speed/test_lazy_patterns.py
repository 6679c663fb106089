"""Importing imagelint compiles none of its own regular expressions (``imagelint.lazyre``)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading

import pytest

from imagelint.lazyre import LazyPattern, lazy_pattern

# Imports every imagelint module in a fresh interpreter, counting the patterns the standard
# library's compiler builds for a caller inside imagelint (stdlib modules compile their own).
_PROBE = r"""
import json, pkgutil, re, sys, importlib
import re._compiler as compiler
callers = []
original = compiler.compile
def counting(pattern, flags=0):
    frame = sys._getframe(1)
    # The frame that asked: past re's own and the lazy pattern's (a pattern used at import counts).
    while frame is not None and ("/re/" in frame.f_code.co_filename.replace("\\", "/")
                                 or frame.f_globals.get("__name__") == "imagelint.lazyre"):
        frame = frame.f_back
    if frame is not None and frame.f_globals.get("__name__", "").startswith("imagelint"):
        callers.append(f"{frame.f_globals['__name__']}:{frame.f_lineno}")
    return original(pattern, flags)
compiler.compile = counting
import imagelint
names = sorted(m.name for m in pkgutil.walk_packages(imagelint.__path__, "imagelint.") if not m.name.endswith("__main__"))
for name in names:
    importlib.import_module(name)
print(json.dumps({"modules": len(names), "callers": callers}))
"""


def _import_everything() -> dict:
    done = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_importing_every_module_compiles_no_imagelint_pattern() -> None:
    report = _import_everything()
    assert report["modules"] > 150, "the probe walked the package"
    assert report["callers"] == [], f"compiled at import: {report['callers']}"


def test_the_probe_sees_a_pattern_compiled_at_import(tmp_path) -> None:
    """The check above could pass vacuously: a module of the package that compiles at import is seen."""
    # Code run as a module of the package: one pattern compiled directly, one lazy one used.
    module = "import re, imagelint.lazyre as L; re.compile('a+b'); L.lazy_pattern('c+d').search('ccd')"
    probe = _PROBE.replace("import imagelint\n", f"import imagelint\nexec({module!r}, {{'__name__': 'imagelint.probe'}})\n", 1)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    callers = json.loads(done.stdout.strip().splitlines()[-1])["callers"]
    assert [c for c in callers if c.startswith("imagelint.probe")] == ["imagelint.probe:1"] * 2


@pytest.mark.parametrize("flags", [0, re.IGNORECASE | re.MULTILINE])
def test_a_lazy_pattern_answers_as_the_compiled_one(flags: int) -> None:
    source = r"^(?P<key>[a-z]+)\s*=\s*(\d+)$"
    lazy, real = lazy_pattern(source, flags), re.compile(source, flags)
    text = "gpu = 1\nGPU=2\nnot a line\nid=3"
    assert lazy.pattern == real.pattern
    assert [m.groups() for m in lazy.finditer(text)] == [m.groups() for m in real.finditer(text)]
    assert lazy.findall(text) == real.findall(text)
    assert lazy.sub(r"\g<key>:\2", text) == real.sub(r"\g<key>:\2", text)
    assert lazy.subn("x", text) == real.subn("x", text)
    assert lazy.split(text) == real.split(text)
    assert (lazy.flags, lazy.groups, dict(lazy.groupindex)) == (real.flags, real.groups, dict(real.groupindex))
    assert bool(lazy.match("a=1")) == bool(real.match("a=1")) and bool(lazy.fullmatch("a=1")) == bool(real.fullmatch("a=1"))
    assert [(m.span() if m else None) for m in (lazy.search(text), lazy.search("id=4"), lazy.search("none"))] == \
        [(m.span() if m else None) for m in (real.search(text), real.search("id=4"), real.search("none"))]
    assert isinstance(lazy, LazyPattern) and lazy.compiled is lazy.compiled
    assert lazy.compiled.pattern == source and isinstance(lazy.compiled, re.Pattern)


def test_a_lazy_pattern_is_compiled_once_and_only_when_used(monkeypatch) -> None:
    calls: list[str] = []
    original = re.compile
    monkeypatch.setattr(re, "compile", lambda p, f=0: calls.append(p) or original(p, f))
    lazy = lazy_pattern("lazy-[0-9]+")
    assert calls == [] and lazy.pattern == "lazy-[0-9]+" and "lazy-" in repr(lazy)
    for _ in range(3):
        assert lazy.search("x lazy-12 y")
    assert calls == ["lazy-[0-9]+"]


def test_an_invalid_pattern_fails_at_first_use_as_re_would() -> None:
    lazy = lazy_pattern("(unclosed")
    with pytest.raises(re.error):
        lazy.search("x")
    with pytest.raises(AttributeError):
        lazy.no_such_method  # noqa: B018


def test_threads_using_a_new_pattern_at_once_all_get_answers() -> None:
    lazy = lazy_pattern(r"(\d+)-(\d+)")
    results: list[object] = []
    threads = [threading.Thread(target=lambda: results.append(lazy.search("a 12-34 b").groups())) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [("12", "34")] * 8
