"""Bad files and flags: exit 2, one line with file, line and what was expected.

The many small cases run the console script's ``main()`` in-process (``run_main``: the
same typer app and error handling, no interpreter start-up); the ones whose memory
matters (alias bombs, deep nesting) and one case of each family run the installed
``imagelint`` script in a child process.
"""

from __future__ import annotations

import textwrap

import pytest

from tests.hostile.cli import assert_usage, run_cli, run_main

DOCKERFILE_OK = "FROM nvidia/cuda:12.4.1-base-ubuntu22.04\nENV NVIDIA_VISIBLE_DEVICES=all\n"


def _alias_bomb(levels: int = 9, fan: int = 9) -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * fan) + "]")
    body = "\n".join("    " + l for l in lines)
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lol\ndata:\n  bomb:\n{body}\n"


# name -> (file name, content, expected fragments of the one error line; "{path}" is replaced)
LINT_FILES = {
    "dockerfile-from-without-image": ("Dockerfile", "FROM\nRUN true\n", ["Dockerfile:1:", "FROM needs an image"]),
    "dockerfile-env-without-pairs": ("Dockerfile", "FROM scratch\n\nENV\n", ["Dockerfile:3:", "ENV needs"]),
    "dockerfile-copy-empty-continuation": ("Dockerfile", "FROM scratch\nCOPY \\\n\n", ["Dockerfile:2:", "COPY needs"]),
    "dockerfile-nul-bytes": ("Dockerfile", "FROM scratch\x00\n", ["Dockerfile", "NUL"]),
    "dockerfile-utf16": ("Dockerfile", "\ufeffFROM scratch\n".encode("utf-16").decode("latin-1"), ["Dockerfile", "UTF-8"]),
    "yaml-tabs": ("pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n\tname: p\n", ["pod.yaml:4:", "YAML"]),
    "yaml-alias-bomb": ("bomb.yaml", _alias_bomb(levels=12, fan=9), ["bomb.yaml", "alias"]),
    "yaml-control-character": ("pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: \"\x1f\"}\n",
                               ["pod.yaml:3:", "control character U+001F"]),
    "yaml-unclosed-flow": ("pod.yaml", "apiVersion: v1\nkind: Pod\nspec: {containers: [\n", ["pod.yaml", "YAML"]),
    "yaml-deep-nesting": ("deep.yaml", "apiVersion: v1\nkind: Pod\nspec: " + "[" * 5000 + "]" * 5000 + "\n",
                          ["deep.yaml", "YAML"]),
}


@pytest.mark.parametrize("case", sorted(LINT_FILES))
def test_malformed_lint_inputs_exit_2_with_file_and_line(case, tmp_path):
    name, content, fragments = LINT_FILES[case]
    path = tmp_path / name
    path.write_bytes(content.encode("latin-1") if case == "dockerfile-utf16" else content.encode())
    if case in ("yaml-alias-bomb", "yaml-deep-nesting", "dockerfile-from-without-image"):
        run = run_cli("lint", name, cwd=tmp_path, timeout=60)
        assert run.peak_rss_bytes < 300 << 20, run.peak_rss_bytes  # refused, not expanded
    else:
        run = run_main("lint", name, cwd=tmp_path)
    assert_usage(run, *fragments)


def test_a_small_alias_bomb_under_the_alias_limit_is_never_expanded(tmp_path):
    # 81 aliases (under the limit) naming 9**10 leaves: shared, not copied; the walk stays bounded.
    (tmp_path / "bomb.yaml").write_text(_alias_bomb(levels=9, fan=9))
    run = run_cli("lint", "bomb.yaml", cwd=tmp_path, timeout=60)
    assert run.returncode in (0, 2), run.stderr
    assert "Traceback" not in run.output
    assert run.peak_rss_bytes < 300 << 20 and run.seconds < 30, (run.peak_rss_bytes, run.seconds)


def test_multi_document_yaml_with_non_kubernetes_documents_is_linted(tmp_path):
    (tmp_path / "all.yaml").write_text(textwrap.dedent("""\
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        spec:
          containers:
          - name: c
            image: nvidia/cuda:12.4.1-base-ubuntu22.04
            resources: {limits: {nvidia.com/gpu: 1}}
        ---
        just a string
        ---
        - a
        - list
        ---
        foo: bar
        ---
        42
        ---
        ---
        kind: 7
        apiVersion: [x]
        """))
    run = run_main("lint", "--format", "json", "all.yaml", cwd=tmp_path)
    assert run.returncode in (0, 1), run.stderr
    assert "Traceback" not in run.output
    import json

    doc = json.loads(run.stdout)
    assert doc["results"] and all(r["error"] is None for r in doc["results"])


# --- TOML config, target and matrix files (exit 2: file:line: what was expected) -----------------------------

CONFIGS = {
    "config-unknown-key": (".imagelint.toml", 'select = ["IL1"]\nunknown-key = 1\n', ["unknown key 'unknown-key'", ":2:"]),
    "config-wrong-type": (".imagelint.toml", "select = [\"IL1\"]\nfail-on = 3\n", ["fail-on", ":2:"]),
    "config-select-not-list": (".imagelint.toml", "select = 5\n", ["select", ":1:"]),
    "config-bad-toml": (".imagelint.toml", "select = [\n", [".imagelint.toml"]),
    "config-ignore-entry-wrong": (".imagelint.toml", '[[ignores]]\nrule = "IL1"\nreason = "r"\nexpires = "tomorrow"\n',
                                  ["expires", ":4:"]),
}


@pytest.mark.parametrize("case", sorted(CONFIGS))
def test_bad_config_files_exit_2(case, tmp_path):
    name, content, fragments = CONFIGS[case]
    (tmp_path / name).write_text(content)
    (tmp_path / "Dockerfile").write_text(DOCKERFILE_OK)
    run = (run_cli if case == "config-unknown-key" else run_main)("lint", "--config", name, "Dockerfile", cwd=tmp_path)
    assert_usage(run, *fragments)


TARGETS = {
    "target-driver-unparseable": ('[[pool]]\nname = "a"\ndriver = "535.x.y"\n', ["target.toml:3:", "driver", "expected"]),
    "target-driver-number": ('[[pool]]\nname = "a"\ndriver = 535\n', ["target.toml:3:", "driver"]),
    "target-pool-not-table": ('pool = "x"\n', ["target.toml", "pool"]),
    "target-bad-toml": ('[[pool]\n', ["target.toml"]),
}


@pytest.mark.parametrize("case", sorted(TARGETS))
def test_bad_target_files_exit_2(case, tmp_path):
    content, fragments = TARGETS[case]
    (tmp_path / "target.toml").write_text(content)
    (tmp_path / "Dockerfile").write_text(DOCKERFILE_OK)
    run = (run_cli if case == "target-driver-unparseable" else run_main)("lint", "--target-file", "target.toml",
                                                                        "Dockerfile", cwd=tmp_path)
    assert_usage(run, *fragments)


OVERLAYS = {
    "overlay-no-meta": ('[[cuda_releases]]\nversion = "12.4.1"\n', ["overlay.toml", "meta"]),
    "overlay-wrong-kind": ('[meta]\nkind = "something-else"\nschema_version = 1\n', ["overlay.toml", "kind"]),
    "overlay-row-wrong-type": (
        '[meta]\nkind = "imagelint-matrix-overlay"\nschema_version = 1\ndata_version = "2026-12-01"\n\n[[cuda_releases]]\nversion = 12\n'
        'min_driver = "535.54.03"\nsource = "test"\n', ["overlay.toml", "cuda_releases"]),
    "overlay-unknown-section": ('[meta]\nkind = "imagelint-matrix-overlay"\nschema_version = 1\ndata_version = "2026-12-01"\n\n[[not_a_section]]\nx = 1\n',
                                ["overlay.toml", "not_a_section"]),
}


@pytest.mark.parametrize("case", sorted(OVERLAYS))
def test_matrix_overlays_contradicting_the_schema_exit_2(case, tmp_path):
    content, fragments = OVERLAYS[case]
    (tmp_path / "overlay.toml").write_text(content)
    (tmp_path / "Dockerfile").write_text(DOCKERFILE_OK)
    run = (run_cli if case == "overlay-row-wrong-type" else run_main)("lint", "--matrix-overlay", "overlay.toml",
                                                                     "Dockerfile", cwd=tmp_path)
    assert_usage(run, *fragments)


@pytest.mark.parametrize("args,fragment", [
    (["inspect", "oci-dir:/nonexistent/layout"], "/nonexistent/layout"),
    (["inspect", "--platform", "linux//", "oci-dir:/nonexistent"], "platform"),
    (["inspect", "--platform", "linux/amd64", "--all-platforms", "oci-dir:/nonexistent"], "--all-platforms"),
    (["inspect", "--ca-cert", "/nonexistent.pem", "oci-dir:/nonexistent"], "--ca-cert"),
    (["inspect", "--timeout", "-1", "oci-dir:/nonexistent"], "--timeout"),
    (["inspect", "--insecure-registry", "a/b", "oci-dir:/nonexistent"], "--insecure-registry"),
    (["inspect", "registry:UPPER/Case:tag"], "UPPER/Case"),
    (["check", "--driver", "not-a-driver", "oci-dir:/nonexistent"], "--driver"),
    (["check", "--format", "xml", "--driver", "535.104.05", "oci-dir:/nonexistent"], "--format"),
])
def test_bad_flags_exit_2_in_one_line(args, fragment, tmp_path):
    run = run_main(*args, cwd=tmp_path, env={"IMAGELINT_NO_CACHE": "1"})
    assert run.returncode in (2, 3), run.stderr  # a missing layout path is "unreadable" (3)
    line = run.error_line()
    assert fragment in line, line


def _doubling_dockerfile(doublings: int, then: str = "") -> str:
    lines = ["FROM nvidia/cuda:12.4.1-base-ubuntu22.04", "ARG A0=xxxxxxxxxxxxxxxx"]
    lines += [f"ARG A{i}=${{A{i - 1}}}${{A{i - 1}}}" for i in range(1, doublings + 1)]
    return "\n".join(lines) + "\n" + then


def test_args_that_double_each_other_are_refused_at_their_line_in_bounded_memory(tmp_path):
    # < 1 KB: 16 characters doubled 39 times would be 8 TiB; one word may expand to 1 MiB.
    text = _doubling_dockerfile(39, "ENV X=$A39\n")
    assert len(text) < 1024
    (tmp_path / "Dockerfile").write_text(text)
    run = run_cli("lint", "Dockerfile", cwd=tmp_path, timeout=60, rlimit_as=768 << 20)
    line = assert_usage(run, "Dockerfile:", "expands to more than 1048576 characters")
    assert line.startswith("imagelint: error: Dockerfile:19:"), line  # A17: 16 * 2**17 = 2 MiB


def test_many_large_expansions_under_the_word_limit_are_bounded_by_the_file_budget(tmp_path):
    # Each word stays under the word limit (512 KiB), but 300 of them would be 150 MiB.
    text = _doubling_dockerfile(15, "".join(f"ENV B{i}=$A15\n" for i in range(300)))
    (tmp_path / "Dockerfile").write_text(text)
    run = run_cli("lint", "Dockerfile", cwd=tmp_path, timeout=60, rlimit_as=768 << 20)
    assert_usage(run, "Dockerfile:", "variable expansion in this file produces more than 67108864 characters")


def test_expansion_work_is_counted_against_one_budget_per_file():
    """The bound is on characters produced, counted: the refusal comes within one word of it."""
    from imagelint.static.dockerfile import parse_dockerfile
    from imagelint.static.words import MAX_WORD_CHARS, ExpansionBudget, ExpansionLimit, process_word

    budget = ExpansionBudget(10 * MAX_WORD_CHARS)
    env = {"A": "x" * (MAX_WORD_CHARS // 2)}
    with pytest.raises(ExpansionLimit):
        for _ in range(100):
            process_word("$A", env, budget=budget)
    assert -MAX_WORD_CHARS <= budget.left < 0
    with pytest.raises(ExpansionLimit):
        process_word("${A}${A:-y}$A", env, budget=ExpansionBudget())
    # An ordinary file spends what its values hold, once per use, and is linted as before.
    df = parse_dockerfile(_doubling_dockerfile(3, "ENV X=$A3\n"))
    from imagelint.static.dockerfile_facts import dockerfile_facts

    facts = dockerfile_facts(df)
    assert any(e.name == "X" and e.value == "x" * 128 for e in facts.env), facts.env
