"""Issue 39, cause 3: a report path that is a planted link, or an input of the same run, is refused
(exit 4, one line) and nothing is written through it: ``imagelint.sarif -> ~/.bashrc`` in a
repository whose CI runs ``lint . --format sarif=imagelint.sarif``, ``out.json -> Dockerfile``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from imagelint.errors import EXIT_OUTPUT
from tests.hostile.cli import assert_exit, run_cli, run_main

DOCKERFILE = "FROM nvidia/cuda:12.4.1-base-ubuntu22.04\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    tree = tmp_path / "repo"
    tree.mkdir()
    (tree / "Dockerfile").write_text(DOCKERFILE)
    return tree


@pytest.mark.parametrize("how", [["--format", "sarif=imagelint.sarif"], ["--format", "sarif", "-o", "imagelint.sarif"]])
def test_a_link_to_a_file_outside_the_tree_is_never_written_through(tmp_path: Path, repo: Path, how: list[str]) -> None:
    bashrc = tmp_path / "home" / ".bashrc"
    bashrc.parent.mkdir()
    bashrc.write_text("# the user's shell\n")
    os.symlink(bashrc, repo / "imagelint.sarif")
    run = run_cli("lint", ".", *how, cwd=repo, env={"HOME": str(bashrc.parent)})
    assert_exit(run, EXIT_OUTPUT, "imagelint.sarif", "a symbolic link")
    assert bashrc.read_text() == "# the user's shell\n"
    assert os.path.islink(repo / "imagelint.sarif")  # the repository's own link is left as it was


def test_a_link_to_an_input_is_never_written_through(repo: Path) -> None:
    os.symlink("Dockerfile", repo / "out.json")
    run = run_main("lint", "Dockerfile", "--format", "json", "-o", "out.json", cwd=repo)
    assert_exit(run, EXIT_OUTPUT, "out.json", "a symbolic link")
    assert (repo / "Dockerfile").read_text() == DOCKERFILE


def test_an_input_of_the_same_run_is_never_overwritten(repo: Path) -> None:
    os.link(repo / "Dockerfile", repo / "report.json")  # the same file under another name
    for target in ("Dockerfile", "report.json"):
        run = run_main("lint", "Dockerfile", "--format", "json", "-o", target, cwd=repo)
        assert_exit(run, EXIT_OUTPUT, target, "an input of this run")
        assert (repo / "Dockerfile").read_text() == DOCKERFILE


def test_a_link_planted_after_the_early_check_is_refused_at_the_write(repo: Path) -> None:
    from imagelint.errors import OutputError
    from imagelint.report.output import write_report

    victim = repo.parent / "victim"
    victim.write_text("keep\n")
    os.symlink(victim, repo / "late.json")
    with pytest.raises(OutputError, match="a symbolic link"):
        write_report(str(repo / "late.json"), "{}")
    assert victim.read_text() == "keep\n"


def test_ordinary_report_files_and_streams_are_still_written(repo: Path) -> None:
    (repo / "old.json").write_text("x" * 10000)
    run = run_main("lint", "Dockerfile", "--format", "json", "-o", "old.json", cwd=repo)
    assert run.returncode in (0, 1), run.output
    assert (repo / "old.json").read_text().startswith("{") and len((repo / "old.json").read_text()) < 10000
