"""Every snippet of README.md and docs/*.md works as pasted, so none can drift.

* shell: every ``imagelint`` command parses against the real CLI (commands, flags, values);
  each one that needs no network runs in a workspace holding the files it names;
* TOML: config snippets load as a config, target snippets as a target file, matrix snippets
  name only sections and fields the matrix schema has;
* the workflow: its imagelint step runs ``action/run.sh`` under a simulated runner against the
  image built into a real dockerd, and the SARIF it uploads meets GitHub's requirements;
* pre-commit: what the docs say the hook does to the documented Dockerfile is what ``lint`` does
  with the config as pasted; and (network) the real ``pre-commit`` clones the pinned release (this
  commit, tagged in a clone) and fails it;
* pins: the docs pin ``v`` + pyproject's version, and use only inputs and hooks this checkout has.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tarfile
import textwrap
from pathlib import Path

import pytest
import yaml

from tests.integrations.snippets import ROOT, Snippet, shell_commands, snippets, synopsis_lines
from tests.report.sarif_github import assert_github_accepts

ALL = snippets()


def of_kind(kind: str) -> list[Snippet]:
    return [s for s in ALL if s.kind == kind]


def test_every_snippet_is_recognised():
    unknown = [s.where for s in ALL if s.kind == "unknown"]
    assert not unknown, f"snippets with no check (teach tests/integrations/snippets.py what they are): {unknown}"
    assert of_kind("shell") and of_kind("workflow") and of_kind("pre-commit") and of_kind("target")


# --- shell ----------------------------------------------------------------------------------------


def _commands() -> list[tuple[str, list[str]]]:
    return [(s.where, cmd) for s in of_kind("shell") for cmd in shell_commands(s)]


def _imagelint_commands() -> list[tuple[str, list[str]]]:
    return [(w, c[1:]) for w, c in _commands() if c[0] == "imagelint"]


def _parse(args: list[str]) -> None:
    """Parse ``imagelint ARGS`` with the real click command tree without running anything."""
    import click
    import typer

    import imagelint.cli as cli

    command: click.Command = typer.main.get_command(cli.app)
    ctx = command.make_context("imagelint", list(args), resilient_parsing=False)
    words = list(args)
    while isinstance(command, click.Group):
        # The group's parser leaves its command and that command's words (not ctx.protected_args:
        # deprecated in Click 8.2, gone in Click 9).
        _, rest, _ = command.make_parser(ctx).parse_args(list(words))
        if not rest:
            return
        name, *words = rest
        sub = command.get_command(ctx, name)
        if sub is None:
            raise click.UsageError(f"no such command {name!r}")
        command, ctx = sub, sub.make_context(name, list(words), parent=ctx, resilient_parsing=False)


@pytest.mark.parametrize("where,args", _imagelint_commands(), ids=lambda v: v if isinstance(v, str) else " ".join(v)[:60])
def test_every_imagelint_command_parses(where, args):
    try:
        _parse(args)
    except Exception as exc:  # click.UsageError, BadParameter …
        pytest.fail(f"{where}: imagelint {' '.join(args)}: {exc}")


@pytest.mark.parametrize("snippet", [s for s in ALL if s.kind == "synopsis"], ids=lambda s: s.where)
def test_usage_synopses_name_real_commands_and_flags(snippet):
    import click
    import typer

    import imagelint.cli as cli

    for words, flags in synopsis_lines(snippet):
        command: click.Command = typer.main.get_command(cli.app)
        for w in words:
            assert isinstance(command, click.Group) and w in command.commands, f"{snippet.where}: no command {' '.join(words)}"
            command = command.commands[w]
        known = {o for p in command.params for o in (*p.opts, *p.secondary_opts)}
        missing = [f for f in flags if f not in known]
        assert not missing, f"{snippet.where}: imagelint {' '.join(words)} has no {missing}"


def test_other_shell_commands_are_known():
    """Shell lines that are not imagelint: each is the quick start's install or the CI entry point."""
    other = {" ".join(c) for _, c in _commands() if c[0] != "imagelint"}
    # kubectl lines apply the manifests shipped in deploy/ (they must exist) or bind their role.
    applied = {c for c in other if c.startswith("kubectl apply -f ")}
    for line in applied:
        # ``kubectl apply -f -`` reads what imagelint printed into the pipe (audit's PolicyReports).
        assert line == "kubectl apply -f -" or (ROOT / line.split()[-1]).is_file(), line
    bindings = {c for c in other if c.startswith("kubectl create clusterrolebinding imagelint-")}
    assert other - applied - bindings <= {"python3 -m venv .venv", ". .venv/bin/activate", "pip install .", "bash .ci/run"}, other


NETWORK = re.compile(r"^(registry:|docker:)|--cluster|^cluster")


def _needs_network(args: list[str]) -> str | None:
    """Why a command cannot run here (a registry, the daemon, a cluster), else None."""
    if any(NETWORK.search(a) for a in args):
        return "reaches a registry, a daemon or a cluster"
    if args[0] in ("check", "inspect"):
        positional = [a for a in args[1:] if not a.startswith("-")]
        refs = [a for a in positional if re.match(r"^[\w./-]+(:[\w.-]+)?$", a) and "/" in a and not a.startswith(("oci-", "examples"))]
        if refs and not any(a.endswith(".tar") for a in refs):
            return "names a registry image"
    if args[:2] == ["lint", "k8s/deployment.yaml"] and "--image" in args:
        return "--image names a registry image"
    return None


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The files the docs' commands name: the example image, a Dockerfile, manifests, configs,
    target files (the docs' own target snippet), and app.tar packed the usual way."""
    ws = tmp_path_factory.mktemp("snippet-workspace")
    (ws / ".git").mkdir()
    shutil.copytree(ROOT / "examples", ws / "examples")
    (ws / "Dockerfile").write_text("FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\nENV NVIDIA_VISIBLE_DEVICES=all\n")
    (ws / "k8s").mkdir()
    (ws / "k8s" / "deployment.yaml").write_text(textwrap.dedent("""\
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: serve}
        spec:
          selector: {matchLabels: {app: serve}}
          template:
            metadata: {labels: {app: serve}}
            spec:
              containers:
              - name: serve
                image: registry.example/serve:1.0
                resources:
                  limits: {nvidia.com/gpu: 1}
        """))
    (ws / "configs").mkdir()
    (ws / "configs" / "deepstream_app.txt").write_text("[application]\nenable-perf-measurement=1\n[primary-gie]\ngpu-id=0\n")
    (ws / "entrypoint.sh").write_text("#!/bin/sh\nexec python3 serve.py\n")
    [target] = of_kind("target")
    for name in ("pools.toml", "cluster.toml", "prod.toml", "now.toml", "next.toml"):
        (ws / name).write_text(target.body)
    (ws / "images.txt").write_text("# the images audit --images checks\noci-dir:examples/cuda-app\n")
    shutil.copytree(ROOT / "examples" / "cuda-app", ws / "build" / "layout")
    with tarfile.open(ws / "app.tar", "w") as tar:  # what `tar -C DIR -cf app.tar .` writes: ./, ./index.json …
        tar.add(ws / "examples" / "cuda-app", arcname=".")
    return ws


def _offline_commands() -> list[tuple[str, list[str]]]:
    return [(w, a) for w, a in _imagelint_commands() if _needs_network(a) is None]


@pytest.mark.parametrize("where,args", _offline_commands(), ids=lambda v: v if isinstance(v, str) else " ".join(v)[:60])
def test_offline_imagelint_commands_run(where, args, workspace):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env.update({"IMAGELINT_NO_CACHE": "1", "NO_COLOR": "1"})
    words = []
    for a in args:  # the shell's pathname expansion
        matches = sorted(str(p.relative_to(workspace)) for p in workspace.glob(a)) if any(c in a for c in "*?[") else []
        words += matches or [a]
    proc = subprocess.run(["imagelint", *words], cwd=workspace, env=env, capture_output=True, text=True, timeout=180)
    # audit exits 1 when a workload fails (the example repository's image does, today and on the plan)
    expected = (0, 1) if args[0] in ("check", "lint", "audit") else (0,)
    assert proc.returncode in expected, f"{where}: imagelint {' '.join(args)} exited {proc.returncode}: {proc.stderr.strip()[-500:]}"
    assert "Traceback" not in proc.stderr


def test_most_commands_run_offline():
    """The network-only share stays small: a snippet that cannot be run is one that can drift."""
    # Commands whose whole job is a live cluster (doctor, audit, target --cluster) cannot run here;
    # their flags are still checked above. Of the rest, most must run.
    local = [a for _, a in _imagelint_commands() if not any("--cluster" in w for w in a)]
    total, offline = len(local), len(_offline_commands())
    assert offline >= total * 0.6, (offline, total, [" ".join(a) for _, a in _imagelint_commands() if _needs_network(a)])


def test_the_quick_start_as_written(workspace):
    """README's quick start: a venv, then the check exits 1 on one error (IL302) with IL304 among the
    warnings, as the text after it says."""
    quick = next(s for s in of_kind("shell") if "oci-dir:examples/cuda-app" in s.body and "pip install" in s.body)
    *install, cmd = shell_commands(quick)
    assert install == [["python3", "-m", "venv", ".venv"], [".", ".venv/bin/activate"], ["pip", "install", "."]]
    proc = subprocess.run(cmd + ["--format", "json"], cwd=workspace, capture_output=True, text=True, timeout=180,
                          env={**os.environ, "IMAGELINT_NO_CACHE": "1", "NO_COLOR": "1"})
    findings = [(f["rule"], f["severity"]) for r in json.loads(proc.stdout)["results"] for f in r["findings"]]
    assert proc.returncode == 1, proc.stderr
    assert [f for f in findings if f[1] == "error"] == [("IL302", "error")], findings
    # IL107 states IL101's verdict from the compat library's side: one cause, one finding (IL101's).
    assert sorted(r for r, sev in findings if sev == "warning") == ["IL101", "IL304", "IL503"], findings
    assert sorted(r for r, sev in findings if sev == "info") == ["IL302", "IL303"], findings
    readme = (ROOT / "README.md").read_text()
    assert "exits 1 on one error" in readme and "Three warnings" in readme and "two infos" in readme


def test_the_example_repository_as_the_readme_describes_it(workspace):
    """README's next steps: lint and the offline planner on examples/gpu-repo, each with one command."""
    env = {**os.environ, "IMAGELINT_NO_CACHE": "1", "NO_COLOR": "1"}
    commands = {c[1]: c for _, c in _commands() if c[0] == "imagelint" and any("examples/gpu-repo" in w for w in c)}
    assert set(commands) == {"lint", "audit"}, commands
    lint = subprocess.run(commands["lint"] + ["--format", "json"], cwd=workspace, capture_output=True, text=True,
                          timeout=180, env=env)
    report = json.loads(lint.stdout)
    errors = {f["rule"] for r in report["results"] for f in r["findings"] if f["severity"] == "error"}
    assert lint.returncode == 1 and errors == {"IL601", "IL602", "IL612", "IL302"}, lint.stdout[-2000:]
    warnings = sorted((f["rule"], r["image"]["kind"]) for r in report["results"] for f in r["findings"]
                      if f["severity"] == "warning")
    # As the README says: the GPU query at build time, the two pinned Compose services, R535's end of
    # life once (on the target file); nvidia/cuda:12.4.1 on 535 the same info in every file kind.
    assert warnings == [("IL503", "target"), ("IL611", "compose"), ("IL611", "compose"), ("IL701", "dockerfile")], warnings
    cuda124 = {(f["severity"], f["extra"]["outcome"]) for r in report["results"] for f in r["findings"]
               if f["rule"] == "IL101" and "12.4.1" in f["message"] and "pytorch" not in json.dumps(f["location"])}
    assert cuda124 == {("info", "forward-compat")}, cuda124
    plan = subprocess.run(commands["audit"], cwd=workspace, capture_output=True, text=True, timeout=180, env=env)
    assert plan.returncode == 1 and "1 still failing" in plan.stdout and "because: IL302" in plan.stdout, plan.stdout


# --- TOML -----------------------------------------------------------------------------------------


def _parse_config(text: str, path: str):
    from imagelint.core.config import parse_config

    return parse_config(text, path)


@pytest.mark.parametrize("snippet", of_kind("config"), ids=lambda s: s.where)
def test_config_snippets_load(snippet):
    config = _parse_config(snippet.body, str(ROOT / ".imagelint.toml"))
    assert config.target or config.images or config.select or config.ignores, snippet.where


@pytest.mark.parametrize("snippet", of_kind("target"), ids=lambda s: s.where)
def test_target_snippets_load(snippet, tmp_path):
    path = tmp_path / "target.toml"
    path.write_text(snippet.body)
    proc = subprocess.run(["imagelint", "target", "show", "--target-file", str(path)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, f"{snippet.where}: {proc.stderr}"


@pytest.mark.parametrize("snippet", of_kind("matrix"), ids=lambda s: s.where)
def test_matrix_snippets_name_real_sections_and_fields(snippet):
    import json

    schema = json.loads((ROOT / "imagelint" / "schemas" / "matrix.schema.json").read_text())
    section = None
    for n, line in enumerate(snippet.body.splitlines(), snippet.line + 1):
        line = line.split("#", 1)[0].strip()
        if m := re.match(r"^\[\[?([\w.-]+)\]\]?$", line):
            section = m.group(1)
            assert section in schema["properties"], f"{snippet.path.name}:{n}: no matrix section {section!r}"
        elif (m := re.match(r"^([\w-]+)\s*=", line)) and section:
            spec = schema["properties"][section]
            fields = (spec.get("items") or spec).get("properties", {})
            assert m.group(1) in fields, f"{snippet.path.name}:{n}: {section} has no field {m.group(1)!r}"


# --- pins, the workflow and pre-commit ---------------------------------------------------------------


def _git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=60)


def _version() -> str:
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def _pins() -> list[tuple[str, str]]:
    """(where, ref) for every ``uses: imagelint/imagelint@REF`` and pre-commit ``rev: REF``."""
    out = []
    for s in of_kind("workflow"):
        for job in yaml.safe_load(s.body)["jobs"].values():
            out += [(s.where, st["uses"].split("@", 1)[1]) for st in job["steps"]
                    if st.get("uses", "").startswith("imagelint/imagelint@")]
    for s in of_kind("pre-commit"):
        out += [(s.where, repo["rev"]) for repo in yaml.safe_load(s.body)["repos"]]
    return out


def test_docs_pin_the_release_of_this_version_with_what_they_use():
    """Issue 38: the docs pinned a commit hundreds of commits old, whose hook failed on what main
    reports as info. They pin ``v`` + pyproject's version, so the release that ships this code is
    the one the docs show; the snippets run against this checkout (tests below)."""
    import imagelint

    pins = _pins()
    assert pins, "the workflow and pre-commit snippets pin a release"
    assert _version() == imagelint.__version__
    for where, ref in pins:
        assert ref == f"v{_version()}", f"{where}: pins {ref}, not this version's release v{_version()}"
    inputs = set(yaml.safe_load((ROOT / "action.yml").read_text())["inputs"])
    for s in of_kind("workflow"):
        for step in (st for job in yaml.safe_load(s.body)["jobs"].values() for st in job["steps"]):
            if step.get("uses", "").startswith("imagelint/imagelint@"):
                assert set(step.get("with", {})) <= inputs, f"{s.where}: inputs action.yml lacks"
    hooks = {h["id"] for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    for s in of_kind("pre-commit"):
        for repo in yaml.safe_load(s.body)["repos"]:
            assert {h["id"] for h in repo["hooks"]} <= hooks, s.where


def _pre_commit_claim() -> tuple[Snippet, Snippet, str, str]:
    """The pre-commit section's config snippet, and the Dockerfile and rule it says fail."""
    [snippet] = of_kind("pre-commit")
    config_toml = next(s for s in of_kind("config") if s.path == snippet.path)
    m = re.search(r"Dockerfile `FROM ([^`]+)` fails with\s+`(IL\d+)", snippet.path.read_text().replace("\n", " "))
    assert m, "the docs say which Dockerfile fails with which rule"
    return snippet, config_toml, m.group(1), m.group(2)


def test_the_pre_commit_claim_holds_as_written(tmp_path):
    """The hook runs ``imagelint lint`` on the staged Dockerfile with the config as pasted: it fails
    (exit 1) with the rule the docs name, an error at Dockerfile:1 (issue 38: the docs said IL101
    fails where the tool gave a warning and exit 0)."""
    _, config_toml, base, rule = _pre_commit_claim()
    (tmp_path / ".git").mkdir()
    (tmp_path / ".imagelint.toml").write_text(config_toml.body)
    (tmp_path / "Dockerfile").write_text(f"FROM {base}\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env.update({"IMAGELINT_NO_CACHE": "1", "NO_COLOR": "1"})
    proc = subprocess.run(["imagelint", "lint", "Dockerfile", "--format", "json"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    found = [(f["rule"], f["severity"], (f.get("location") or {}).get("line")) for r in json.loads(proc.stdout)["results"]
             for f in r["findings"]]
    assert proc.returncode == 1 and (rule, "error", 1) in found, found
    # and the aside: on a data-centre GPU it is a warning, exit 0
    (tmp_path / ".imagelint.toml").write_text(config_toml.body.replace('"RTX 4090"', '"T4"'))
    proc = subprocess.run(["imagelint", "lint", "Dockerfile", "--format", "json"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    found = [(f["rule"], f["severity"]) for r in json.loads(proc.stdout)["results"] for f in r["findings"]]
    assert proc.returncode == 0 and (rule, "warning") in found, found


def _expand(value: str, sha: str) -> str:
    return value.replace("${{ github.sha }}", sha)


@pytest.mark.dockerd
def test_workflow_snippet_under_a_simulated_runner(tmp_path, dockerd, workspace):
    """The documented workflow's imagelint step: build (here: load) the image into a real dockerd,
    run the action's step script with the step's inputs, upload-sarif's file meets GitHub's rules."""
    [snippet] = of_kind("workflow")
    doc = yaml.safe_load(snippet.body)
    steps = [st for job in doc["jobs"].values() for st in job["steps"]]
    step = next(st for st in steps if st.get("uses", "").startswith("imagelint/imagelint@"))
    upload = next(st for st in steps if st.get("uses", "").startswith("github/codeql-action/upload-sarif@"))
    assert "category" not in upload.get("with", {}), "a category would give every image's run the same one"
    assert upload["with"]["sarif_file"] == f"${{{{ steps.{step['id']}.outputs.sarif-file }}}}"
    outputs = yaml.safe_load((ROOT / "action.yml").read_text())["outputs"]
    assert "sarif-file" in outputs

    sha = "0" * 7 + "feedbeef"
    if shutil.which("skopeo") is None:
        pytest.skip("skopeo is not installed (apt-get install skopeo)")
    archive = tmp_path / "app.tar"
    subprocess.run(["skopeo", "copy", "-q", f"oci:{ROOT / 'examples' / 'cuda-app'}:latest", f"docker-archive:{archive}:app:{sha}"],
                   check=True, timeout=120, capture_output=True)
    client = dockerd.client()
    try:
        client.images.load(archive.read_bytes())
    finally:
        client.close()

    ws = tmp_path / "workspace"
    shutil.copytree(workspace, ws, ignore=shutil.ignore_patterns("examples"))
    (ws / ".github" / "workflows").mkdir(parents=True)
    (ws / ".github" / "workflows" / "gpu-image.yml").write_text(snippet.body)
    out_file, summary = tmp_path / "github_output", tmp_path / "summary.md"
    out_file.write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INPUT_", "GITHUB_"))}
    env.update({
        "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(ws), "GITHUB_OUTPUT": str(out_file),
        "GITHUB_STEP_SUMMARY": str(summary), "RUNNER_TEMP": str(tmp_path / "runner-temp"),
        "GITHUB_REPOSITORY": "org/app", "GITHUB_WORKFLOW_REF": "org/app/.github/workflows/gpu-image.yml@refs/heads/main",
        "IMAGELINT_CACHE_DIR": str(tmp_path / "cache"), "IMAGELINT_VENV": str(tmp_path / "no-venv"),
        "ACTION_PATH": str(ROOT), "HOME": str(tmp_path / "home"), "DOCKER_HOST": dockerd.url,
    })
    action_inputs = yaml.safe_load((ROOT / "action.yml").read_text())["inputs"]
    for name, spec in action_inputs.items():
        value = step["with"].get(name, spec.get("default", ""))
        env["INPUT_" + name.upper().replace("-", "_")] = _expand(str(value), sha)
    proc = subprocess.run(["bash", str(ROOT / "action" / "run.sh")], cwd=ws, env=env, capture_output=True, text=True, timeout=300)
    got = dict(line.split("=", 1) for line in out_file.read_text().splitlines() if "=" in line)
    assert got.get("exit-code") in ("0", "1"), proc.stdout[-1500:] + proc.stderr[-1500:]
    assert "::error" in proc.stdout and "## imagelint" in summary.read_text()
    import json

    sarif = json.loads((ws / got["sarif-file"]).read_text())
    assert_github_accepts(sarif, ws)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for run in sarif["runs"] for r in run["results"]}
    assert "Dockerfile" in uris


@pytest.mark.network
@pytest.mark.slow
def test_pre_commit_snippet_as_pasted(tmp_path):
    """pre-commit clones the pinned release (this commit, tagged as the release of this version in a
    clone) and fails the Dockerfile the docs name."""
    from tests.integrations.conftest import git

    if _git("rev-parse", "--git-dir").returncode != 0:
        pytest.skip("not a git checkout")
    snippet, config_toml, base, rule = _pre_commit_claim()
    release = tmp_path / "release"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(release)], check=True, capture_output=True, timeout=120)
    git(release, "tag", f"v{_version()}")
    text = snippet.body.replace("https://github.com/imagelint/imagelint", str(release))
    project = tmp_path / "project"
    project.mkdir()
    (project / ".pre-commit-config.yaml").write_text(text)
    (project / ".imagelint.toml").write_text(config_toml.body)
    (project / "Dockerfile").write_text(f"FROM {base}\n")
    git(project, "init", "-q")
    git(project, "add", "-A")
    home = Path(os.environ.get("PRE_COMMIT_HOME") or tmp_path / "pre-commit-home")
    exe = shutil.which("pre-commit") or "pre-commit"
    proc = subprocess.run([exe, "run", "--all-files"], cwd=project, capture_output=True, text=True, timeout=900,
                          env={**os.environ, "PRE_COMMIT_HOME": str(home), "NO_COLOR": "1"})
    assert proc.returncode == 1 and rule in proc.stdout and "Dockerfile:1" in proc.stdout, proc.stdout[-2000:] + proc.stderr[-1000:]


# --- output ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("snippet", of_kind("output"), ids=lambda s: s.where)
def test_output_excerpts_are_what_the_command_prints(snippet):
    """An output block starts with ``$ imagelint ...`` (run in the checkout); each later line, up to
    a ``…`` where the excerpt shortens it, is the start of a line the command prints, in order."""
    import shlex
    import sys

    first, *shown = snippet.body.splitlines()
    args = shlex.split(first[2:])[1:]
    proc = subprocess.run([sys.executable, "-m", "imagelint", *args, "--color", "never"], cwd=ROOT,
                          capture_output=True, text=True, timeout=180)
    printed = [ln.strip() for ln in proc.stdout.splitlines()]
    at = 0
    for line in shown:
        want = line.strip().split("…", 1)[0].rstrip()
        if not want:
            continue
        hits = [i for i in range(at, len(printed)) if printed[i].startswith(want)]
        assert hits, f"{snippet.where}: {want!r} is not (after line {at}) in the output of {first!r}:\n{proc.stdout}"
        at = hits[0] + 1


@pytest.mark.parametrize("snippet", [s for s in ALL if s.kind == "gitlab-ci"], ids=lambda s: s.where)
def test_gitlab_ci_jobs_cache_the_cache_dir_and_run_real_commands(snippet):
    """A GitLab CI job: valid YAML, its cache path is the IMAGELINT_CACHE_DIR it sets, and every
    imagelint command of its script parses (variables as placeholder values)."""
    import yaml

    (job,) = yaml.safe_load(snippet.body).values()
    cache_dir = job["variables"]["IMAGELINT_CACHE_DIR"].replace("$CI_PROJECT_DIR/", "")
    assert [p.rstrip("/") for p in job["cache"]["paths"]] == [cache_dir]
    commands = [line.split() for line in job["script"] if line.startswith("imagelint ")]
    assert commands
    for words in commands:
        _parse([w.replace("$CI_REGISTRY_IMAGE:$CI_COMMIT_SHORT_SHA", "registry.example/app:1").strip('"') for w in words[1:]])
