"""The matrix loader's cache of parsed documents (what lets ``imagelint lint`` skip TOML on a warm run)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from imagelint.cachedir import default_cache_dir
from imagelint.matrix import loader
from imagelint.static import driverlibs


@pytest.fixture()
def cache_env(tmp_path, monkeypatch) -> Path:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("IMAGELINT_CACHE_DIR", str(tmp_path / "cache"))
    loader._load_file_cached.cache_clear()
    yield tmp_path / "cache" / "matrix"
    loader._load_file_cached.cache_clear()


@pytest.mark.parametrize("env", [
    {"IMAGELINT_CACHE_DIR": "/x/cache"}, {"XDG_CACHE_HOME": "/x/xdg"}, {"HOME": "/x/home"},
    {"IMAGELINT_CACHE_DIR": "/x/cache", "XDG_CACHE_HOME": "/x/xdg"},
])
def test_the_matrix_cache_lives_where_the_layer_cache_does(monkeypatch, env) -> None:
    for name in ("IMAGELINT_CACHE_DIR", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert loader.matrix_cache_dir() == default_cache_dir() / "matrix"


def _shipped_text() -> tuple[str, str]:
    path = loader._shipped_files()[loader.shipped_versions()[-1]]
    return path.read_text(encoding="utf-8"), f"matrices/{path.name}"


def test_a_warm_load_gives_the_same_matrix_as_parsing(cache_env) -> None:
    text, origin = _shipped_text()
    cold = loader.matrix_from_text(text, origin)
    entries = list(cache_env.glob("matrix-*.ilm"))
    assert len(entries) == 1
    warm = loader.matrix_from_text(text, origin)
    assert warm == cold and warm.sections == cold.sections
    assert dict(loader._cached_document("matrix", text) or {}) == tomllib.loads(text)


def test_a_damaged_or_foreign_entry_is_a_miss(cache_env) -> None:
    text, origin = _shipped_text()
    expected = loader.matrix_from_text(text, origin)
    (entry,) = cache_env.glob("matrix-*.ilm")
    data = bytearray(entry.read_bytes())
    data[len(data) // 2] ^= 0x20  # a flipped bit: the checksum no longer matches
    entry.write_bytes(bytes(data))
    assert loader._cached_document("matrix", text) is None
    assert loader.matrix_from_text(text, origin) == expected  # parsed again and rewritten
    assert loader._cached_document("matrix", text) is not None

    # Another text's entry under this text's name (a crc32 collision, or a file from elsewhere): a miss.
    other = text.replace("[meta]", "[meta]\n# another matrix", 1)
    loader._store_document("matrix", other, tomllib.loads(other))
    entry.write_bytes(loader._entry_path("matrix", other).read_bytes())
    assert loader._cached_document("matrix", text) is None
    entry.write_bytes(b"not an entry")
    assert loader._cached_document("matrix", text) is None


def test_a_parsed_toml_entry_never_stands_for_a_validated_matrix(cache_env) -> None:
    """``parse_text_cached`` (driver-libraries.toml) and the matrix share the directory, not their entries."""
    text, origin = _shipped_text()
    loader.parse_text_cached(text, origin)
    assert loader._cached_document("toml", text) is not None
    assert loader._cached_document("matrix", text) is None


def test_the_cache_keeps_a_bounded_number_of_entries(cache_env) -> None:
    for i in range(loader._CACHE_KEEP + 5):
        loader.parse_text_cached(f"[meta]\nn = {i}\n", "test")
    assert len(list(cache_env.glob("*.ilm"))) == loader._CACHE_KEEP
    assert not list(cache_env.glob(".tmp-*"))


def test_driver_library_globs_come_from_the_shipped_table(cache_env) -> None:
    driverlibs.patterns.cache_clear()
    path = loader.shipped_data_file("driver-libraries.toml")
    expected = tuple(r["pattern"] for r in tomllib.loads(path.read_text())["library"])
    assert driverlibs.patterns() == expected and "libcuda.so*" in expected
    assert loader._cached_document("toml", path.read_text(encoding="utf-8")) is not None
    driverlibs.patterns.cache_clear()
    assert driverlibs.patterns() == expected  # from the cache


@pytest.mark.parametrize(("name", "expected"), [
    ("libcuda.so.1", True), ("libcuda.so", True), ("libnvidia-pkcs11-openssl3.so.550.54.15", True),
    ("libcudart.so.12", False), ("app", False), ("libcuda.txt", False), ("libnvidia-ml.so.1", True),
])
def test_is_driver_library_matches_as_fnmatch_does(name, expected) -> None:
    import fnmatch

    assert driverlibs.is_driver_library(name) is expected
    assert expected == any(fnmatch.fnmatchcase(name, g) for g in driverlibs.patterns())
