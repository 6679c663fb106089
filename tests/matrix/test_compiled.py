"""The shipped TOML compiled to JSON at build time (imagelint/matrix/compiled.py, setup.py's build_py).

The compiled files are built here the way a wheel build makes them (``setup.py build_py`` of this
tree) from whatever ``matrices/*.toml`` holds, and every one is checked against the TOML parsed
now: the compiled form cannot drift from the source of truth, and rows another change adds to
the TOML need no edit anywhere else.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from imagelint.errors import ConfigError
from imagelint.matrix import compiled, loader, shipped
from imagelint.matrix.schema import KIND_MATRIX

REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO / "matrices"


@pytest.fixture(scope="module")
def built_matrices(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``imagelint/matrices`` of this tree as ``setup.py build_py`` builds it."""
    out = tmp_path_factory.mktemp("build")
    done = subprocess.run([sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return out / "imagelint" / "matrices"


def test_the_build_compiles_every_shipped_toml_file(built_matrices: Path) -> None:
    tomls = sorted(p.name for p in SOURCE.glob("*.toml"))
    assert tomls, "no shipped TOML to compile"
    assert sorted(p.name for p in built_matrices.glob("*.toml.json")) == [f"{n}.json" for n in tomls]


@pytest.mark.parametrize("name", sorted(p.name for p in SOURCE.glob("*.toml")))
def test_a_compiled_document_is_the_toml_parsed_now(built_matrices: Path, name: str) -> None:
    text = (SOURCE / name).read_text(encoding="utf-8")
    entry = json.loads((built_matrices / f"{name}.json").read_bytes())
    assert entry["doc"] == tomllib.loads(text)
    is_matrix = tomllib.loads(text).get("meta", {}).get("kind") == KIND_MATRIX
    assert entry["validated"] is is_matrix
    assert compiled.compiled_document(built_matrices / name, text, validated=is_matrix) == entry["doc"]


def test_an_installed_package_loads_the_shipped_data_without_a_toml_parser(built_matrices, monkeypatch, tmp_path) -> None:
    expected = loader.load_matrix()  # parsed from the source tree's TOML
    expected_libraries = loader.parse_text("" + (SOURCE / "driver-libraries.toml").read_text(), "x")

    def no_parsing(*_args, **_kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("parsed TOML although the compiled form was there")

    monkeypatch.setattr(loader, "_shipped_dir", lambda: built_matrices)
    monkeypatch.setattr(loader, "toml_loads", no_parsing)
    monkeypatch.setenv("IMAGELINT_CACHE_DIR", str(tmp_path / "empty-cache"))  # a fresh runner
    loader._load_file_cached.cache_clear()
    shipped.shipped_section.cache_clear()
    try:
        matrix = loader.load_matrix()
        assert matrix.sections == expected.sections and matrix.version == expected.version
        assert [dict(r) for r in shipped.shipped_section("nvidia_names")] == [dict(r) for r in expected.sections["nvidia_names"]]
        assert loader.shipped_document("driver-libraries.toml", "driver library table") == expected_libraries
        assert not (tmp_path / "empty-cache" / "matrix").exists()  # nothing to write either
    finally:
        loader._load_file_cached.cache_clear()
        shipped.shipped_section.cache_clear()


def test_a_compiled_file_that_is_not_of_this_text_is_not_used(built_matrices, monkeypatch, tmp_path) -> None:
    package = tmp_path / "matrices"
    shutil.copytree(built_matrices, package)
    newest = max(p for p in package.glob("*.toml") if loader._file_version(p.name))
    # The TOML edited after the build (one row's source changed): the compiled form is stale.
    text = newest.read_text(encoding="utf-8")
    edited = text.replace("[meta]", "[meta]\n# edited after the build", 1)
    newest.write_text(edited, encoding="utf-8")
    assert compiled.compiled_document(newest, edited, validated=True) is None
    calls = []
    real = loader.toml_loads
    monkeypatch.setattr(loader, "toml_loads", lambda t: calls.append(1) or real(t))
    monkeypatch.setattr(loader, "_shipped_dir", lambda: package)
    monkeypatch.setenv("IMAGELINT_CACHE_DIR", str(tmp_path / "cache"))
    loader._load_file_cached.cache_clear()
    try:
        assert loader.load_matrix().sections == loader.matrix_from_text(text, "x").sections
        assert calls, "the stale compiled form stood for the edited TOML"
    finally:
        loader._load_file_cached.cache_clear()


def test_a_compiled_file_beside_a_users_matrix_is_ignored(built_matrices, tmp_path) -> None:
    newest = max(p for p in built_matrices.glob("*.toml") if loader._file_version(p.name))
    mine = tmp_path / "mine.toml"
    shutil.copy(newest, mine)
    # A planted compiled form that matches the text but claims other rows: never read for a user's file.
    entry = json.loads((built_matrices / f"{newest.name}.json").read_bytes())
    entry["doc"]["cuda_releases"] = []
    (tmp_path / "mine.toml.json").write_text(json.dumps(entry))
    loader._load_file_cached.cache_clear()
    try:
        assert loader.load_matrix(str(mine)).sections.get("cuda_releases")
    finally:
        loader._load_file_cached.cache_clear()


def test_an_invalid_shipped_matrix_fails_the_build_step(tmp_path) -> None:
    newest = max(p for p in SOURCE.glob("*.toml") if loader._file_version(p.name))
    text = newest.read_text(encoding="utf-8")
    broken = text.replace("[meta]", "[meta]\nschema_version_typo = 1", 1)
    (tmp_path / newest.name).write_text(broken, encoding="utf-8")
    with pytest.raises(ConfigError):
        compiled.compile_directory(tmp_path)
