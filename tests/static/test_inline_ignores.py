"""Silencing works everywhere lint reads (issue 38): one ``# imagelint ignore=`` syntax in every
file kind with comments, problems with an ignore said (malformed, unknown rule, no reason, unused
as ruff's RUF100), and ``[[ignores]]`` globs matched on the normalised repository-relative path."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

TARGET = ("--driver", "535.104.05", "--gpu", "T4")


def lint(cwd: Path, *args: str) -> tuple[int, dict]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env.update({"IMAGELINT_NO_CACHE": "1", "NO_COLOR": "1"})
    proc = subprocess.run(["imagelint", "lint", *args, *TARGET, "--format", "json"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def by_file(doc: dict) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for r in doc["results"]:
        name = r["image"]["ref"].split(":")[0].removeprefix("./")
        entry = out.setdefault(name, {"findings": [], "suppressed": [], "notices": []})
        entry["findings"] += [f["rule"] for f in r["findings"]]
        entry["suppressed"] += [(s["rule"], s["reason"]) for s in r["suppressed"]]
        entry["notices"] += r["notices"]
    return out


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    return tmp_path


FILES = {
    # the line: a trailing comment on the line it silences (ruff's noqa form)
    "train.py": "import torch\ntorch.cuda.set_device(1)  # imagelint ignore=IL302 2-GPU job, checked in review\n",
    # the line-before form (hadolint's), in shell
    "run.sh": "#!/bin/sh\n# imagelint ignore=IL302 the dev box has 2 GPUs\npython3 serve.py --gpu-id 1\n",
    # INI / DeepStream config, with ';' too
    "deepstream_app.txt": "[primary-gie]\ngpu-id=1 ; imagelint ignore=IL302 a 2-GPU edge box\n",
    "k8s/job.yaml": textwrap.dedent("""\
        apiVersion: batch/v1
        kind: Job
        metadata: {name: train}
        spec:
          template:
            spec:
              containers:
              - name: c
                image: registry.example/train:1
                env:
                # imagelint ignore=IL301 pinned to the second GPU on purpose
                - {name: CUDA_VISIBLE_DEVICES, value: "1"}
                resources:
                  limits: {nvidia.com/gpu: 1}
              restartPolicy: Never
        """),
}


def test_one_syntax_silences_in_every_file_kind(repo):
    for name, text in FILES.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    _, doc = lint(repo, *FILES)
    got = by_file(doc)
    assert got["train.py"]["suppressed"] == [("IL302", "2-GPU job, checked in review")], got["train.py"]
    assert got["run.sh"]["suppressed"] == [("IL302", "the dev box has 2 GPUs")], got["run.sh"]
    assert got["deepstream_app.txt"]["suppressed"] == [("IL302", "a 2-GPU edge box")]
    assert ("IL301", "pinned to the second GPU on purpose") in got["k8s/job.yaml"]["suppressed"]
    for name in FILES:
        assert "IL302" not in got[name]["findings"] and "IL301" not in got[name]["findings"], (name, got[name])


def test_what_is_wrong_with_an_ignore_is_said(repo):
    (repo / "train.py").write_text(textwrap.dedent("""\
        import torch
        torch.cuda.set_device(1)  # imagelint ignore IL302 forgot the equals sign
        torch.cuda.set_device(2)  # imagelint ignore=IL302
        torch.cuda.set_device(3)  # imagelint ignore=IL999 no such rule
        x = 1  # imagelint ignore=IL302 nothing here
        """))
    _, doc = lint(repo, "train.py")
    notes = " | ".join(by_file(doc)["train.py"]["notices"] + doc.get("notices", []))
    assert "train.py:2: malformed ignore comment" in notes
    assert "train.py:3: ignore of IL302 has no reason" in notes
    assert "train.py:4: ignore names no rule imagelint has (IL999)" in notes
    assert "train.py:5: ignore of IL302 silenced nothing" in notes and "RUF100" in notes
    assert by_file(doc)["train.py"]["findings"].count("IL302") == 3, "nothing was silenced without a reason"


def test_json_has_no_comments_and_the_docs_say_what_to_do():
    doc = (Path(__file__).resolve().parents[2] / "docs" / "lint.md").read_text()
    assert "JSON has no comments" in doc and "[[ignores]]" in doc


@pytest.mark.parametrize("glob", ["train.py", "**/train.py", "/train.py", "src/"])
def test_ignores_globs_match_the_repository_path_however_lint_is_called(repo, glob):
    """``lint train.py`` (pre-commit), ``lint .`` (./train.py) and an absolute path name one file."""
    (repo / "src").mkdir()
    (repo / "src" / "train.py").write_text("import torch\ntorch.cuda.set_device(1)\n")
    (repo / ".imagelint.toml").write_text(f'[[ignores]]\nrule = "IL302"\nimage = "{glob}"\nreason = "2-GPU job"\n')
    if glob == "/train.py":  # anchored to the config's directory: src/train.py is not it
        _, doc = lint(repo, "src/train.py")
        assert "IL302" in by_file(doc)["src/train.py"]["findings"]
        return
    for args, cwd in ((("src/train.py",), repo), ((".",), repo), ((str(repo / "src" / "train.py"),), repo)):
        _, doc = lint(cwd, *args)
        [result] = [r for r in doc["results"] if r["image"]["ref"].endswith("train.py")]
        assert [s["rule"] for s in result["suppressed"]] == ["IL302"] and not any(
            f["rule"] == "IL302" for f in result["findings"]), (glob, args, result)


def test_index_zero_advice_is_true_for_code_that_uses_gpu_zero(repo):
    (repo / "train.py").write_text("import torch\ntorch.cuda.set_device(0)\n")
    _, doc = lint(repo, "train.py")
    [f] = [f for r in doc["results"] for f in r["findings"] if f["rule"] == "IL302"]
    assert f["severity"] == "info" and "Use GPU 0" not in f["remediation"]
    assert "single-GPU" in f["remediation"] and "imagelint ignore=IL302" in f["remediation"]
