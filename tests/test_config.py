"""Config loading: file discovery, keys, types, and ConfigError with file and line."""

from __future__ import annotations

import datetime as dt

import pytest

from imagelint.core.config import Config, find_config, load_config
from imagelint.errors import ConfigError, EXIT_USAGE

GOOD = """
select = ["IL1", "IL301"]
ignore = ["IL105"]
fail-on = "warning"
matrix = "2026-11-29"

[severity]
IL104 = "error"

[target]
driver = ["535.104.05", "550.54.15"]
gpus = "T4"
runtime-mode = "legacy"
file = "pools.toml"

[[ignores]]
rule = "IL302"
image = "registry.example/app:*"
reason = "the bench rig has 2 GPUs"
expires = 2099-12-31
"""


def test_full_config(tmp_path):
    path = tmp_path / ".imagelint.toml"
    path.write_text(GOOD)
    cfg = load_config(path)
    assert cfg.select == ("IL1", "IL301") and cfg.ignore == ("IL105",) and cfg.fail_on == "warning"
    assert dict(cfg.severity) == {"IL104": "error"}
    assert cfg.target["driver"] == ("535.104.05", "550.54.15") and cfg.target["gpus"] == ("T4",) and not cfg.notices
    assert cfg.target["file"] == str(tmp_path / "pools.toml")
    [ign] = cfg.ignores
    assert ign.rule == "IL302" and ign.expires == dt.date(2099, 12, 31) and ign.source.endswith(":17")


def test_pyproject_table_and_search_up_to_repo_root(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.imagelint]\nfail-on = "info"\n')
    sub = repo / "a" / "b"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    assert find_config() == repo / "pyproject.toml"
    assert load_config().fail_on == "info"
    (repo / "a" / ".imagelint.toml").write_text('fail-on = "never"\n')
    assert load_config().fail_on == "never"


def test_search_stops_at_repo_root(tmp_path, monkeypatch):
    (tmp_path / ".imagelint.toml").write_text('fail-on = "never"\n')
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    monkeypatch.chdir(repo)
    assert load_config() == Config()


@pytest.mark.parametrize(
    "text,line,words",
    [
        ('select = ["IL1"]\nbogus = 1\n', 2, "unknown key 'bogus'"),
        ('fail-on = "fatal"\n', 1, "fail-on"),
        ('select = "IL9"\n', 1, "matches no rule"),
        ('select = [1]\n', 1, "list of strings"),
        ('\n[severity]\nIL104 = "fatal"\n', 3, "IL104"),
        ('\n\n[target]\ndriver = "535"\ncolour = "x"\n', 5, "unknown target key 'colour'"),
        ('[[ignores]]\nrule = "IL302"\nreason = "y"\n[[ignores]]\nrule = "IL301"\nreason = "x"\nexpires = "soon"\n', 7, "expires"),
        ('[[ignores]]\nrule = "IL302"\n', 2, "reason is required"),
        ('select = [\n', 1, "invalid TOML"),
    ],
)
def test_errors_name_file_and_line(tmp_path, text, line, words):
    path = tmp_path / ".imagelint.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    assert exc.value.exit_code == EXIT_USAGE
    assert exc.value.path == str(path) and exc.value.line == line, exc.value.message
    assert words in exc.value.message and "\n" not in exc.value.message


def test_pyproject_errors_point_into_the_tool_table(tmp_path):
    path = tmp_path / "pyproject.toml"
    path.write_text('[project]\nname = "x"\nselect = 1\n\n[tool.imagelint]\nselect = 2\n')
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    assert exc.value.line == 6


def test_flags_beat_file():
    cfg = Config(fail_on="warning", select=("IL1",)).with_overrides(fail_on="error", select=None)
    assert cfg.fail_on == "error" and cfg.select == ("IL1",)


def test_missing_explicit_file(tmp_path):
    with pytest.raises(ConfigError) as exc:
        load_config(tmp_path / "nope.toml")
    assert "nope.toml" in exc.value.message


def test_old_spellings_are_read_with_a_note(tmp_path):
    path = tmp_path / ".imagelint.toml"
    path.write_text('matrix-overlays = ["x.toml"]\n[target]\ngpu = ["T4"]\n')
    cfg = load_config(path)
    assert cfg.target["gpus"] == ("T4",) and cfg.matrix_overlays == (str(tmp_path / "x.toml"),)
    assert [n.split(": ", 1)[1] for n in cfg.notices] == [
        "'matrix-overlays' is deprecated; write 'matrix-overlay'",
        "target.gpu is deprecated; write target.gpus (as in target files)",
    ]
    assert cfg.notices[0].startswith(f"{path}:1") and cfg.notices[1].startswith(f"{path}:3")
    path.write_text('[target]\ngpu = ["T4"]\ngpus = ["H100"]\n')
    with pytest.raises(ConfigError, match="one setting"):
        load_config(path)


def test_target_pool_specs_in_the_config(tmp_path):
    path = tmp_path / ".imagelint.toml"
    path.write_text('[target]\npool = ["driver=535.104.05,gpu=T4", "driver=550.54.15,gpu=H100"]\n')
    assert load_config(path).target["pool"] == ("driver=535.104.05,gpu=T4", "driver=550.54.15,gpu=H100")
