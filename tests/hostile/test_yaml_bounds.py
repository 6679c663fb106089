"""Large YAML streams stay linear and in bounded memory: libyaml (PyYAML's C loader) parses and
composes when PyYAML has it, documents are built one at a time, and the pure-Python loader is the
same loader in every result (documents, lines, errors) when libyaml is absent.

Work is counted (Python function calls per document, with ``sys.setprofile``), memory measured in
a child process; nothing here is timed.
"""

from __future__ import annotations

import sys
import textwrap

import pytest

from imagelint.errors import ConfigError
from imagelint.static import yamlsafe
from imagelint.static.yamlsafe import LineDict, LineList, load_documents
from tests.hostile.cli import run_command

POD = "kind: Pod\napiVersion: v1\nmetadata: {{name: p{i}}}\nspec:\n  containers:\n  - {{name: c, image: x}}\n"
CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i}\ndata:\n  k: v\n"


def _stream(unit: str, n: int) -> str:
    return "---\n".join(unit.format(i=i) for i in range(n))


def _python_calls(text: str, **kw) -> tuple[int, int]:
    """(Python function calls made loading ``text``, documents loaded)."""
    calls = 0

    def count(frame, event, arg):  # type: ignore[no-untyped-def]
        nonlocal calls
        if event == "call":
            calls += 1

    sys.setprofile(count)
    try:
        docs = load_documents(text, "x.yaml", **kw)
    finally:
        sys.setprofile(None)
    return calls, len(docs)


needs_libyaml = pytest.mark.skipif(not getattr(__import__("yaml"), "__with_libyaml__", False),
                                   reason="PyYAML built without libyaml")


@needs_libyaml
@pytest.mark.parametrize("unit", [POD, CONFIGMAP], ids=["pods", "configmaps"])
def test_with_libyaml_the_python_work_per_document_is_small_and_constant(unit):
    small, n_small = _python_calls(_stream(unit, 1000))
    large, n_large = _python_calls(_stream(unit, 20_000))
    assert (n_small, n_large) == (1000, 20_000)
    # Constructing what libyaml composed: a few calls per node. The pure-Python scanner and
    # parser make thousands per document (2,150 per pod), and counting libyaml's events in
    # Python hundreds more.
    assert large / n_large <= 200, large / n_large
    assert large / n_large <= 1.05 * small / n_small  # linear: the same per document at 20x the size


def test_without_libyaml_the_pure_loader_is_linear_too():
    small, _ = _python_calls(_stream(POD, 200), use_libyaml=False)
    large, _ = _python_calls(_stream(POD, 2000), use_libyaml=False)
    assert large <= 10.5 * small, (small, large)


@needs_libyaml
@pytest.mark.parametrize("unit, n", [(POD, 60_000), (CONFIGMAP, 50_000)], ids=["60000-pods", "50000-configmaps"])
def test_many_documents_stream_through_in_bounded_memory(tmp_path, unit, n):
    path = tmp_path / "many.yaml"
    path.write_text(_stream(unit, n))
    code = ("import sys\nfrom imagelint.static import yamlsafe\n"
            "f = sys.argv[1]\ntext = open(f).read()\n"
            "docs = getattr(yamlsafe, 'iter_documents', yamlsafe.load_documents)(text, f)\n"
            "print(sum(1 for _ in docs))\n")
    run = run_command([sys.executable, "-c", code, str(path)], rlimit_as=1 << 30, timeout=300)
    assert run.returncode == 0 and run.stdout.strip() == str(n), run.stderr
    # One document at a time: the text and the interpreter, not every document of the file.
    assert run.peak_rss_bytes < 80 << 20, run.peak_rss_bytes >> 20


SAMPLES = {
    "pods": _stream(POD, 3),
    "block": textwrap.dedent("""\
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: d
          labels: {app: x, "quoted key": 'v'}
        spec:
          template:
            spec:
              containers:
              - name: c
                image: nvidia/cuda:12.4.1-base-ubuntu22.04
                args: ["--x", 1, 2.5, true, null, ~, 0o17, 0x1f, 2026-01-02]
                env:
                - {name: A, value: "1"}
                - name: B
                  value: |
                    multi
                    line
              - name: d
                image: &img reg.example/app:1
              - name: e
                image: *img
        ---
        base: &base {a: 1, b: [1, 2]}
        merged:
          <<: *base
          c: 3
        ...
        --- just a string
        ---
        - a
        - [b, {c: d}]
        ---
        """),
    "no-anchor": textwrap.dedent("""\
        apiVersion: v1
        kind: Pod
        metadata: {name: p, labels: {a: "1", b: 2, c: true, d: ~, e: 1.5, f: 2026-01-02}}
        spec:
          containers:
          - name: c
            args: [--x, 0x1f, 0o17, .inf, !!str 3, !!int "4", "", [], {}]
            env:
            - name: A
              value: |
                two
                lines
            <<: {merged: yes, 1: one}
        ---
        - !!set {a, b}
        - !!binary aGVsbG8=
        - !!omap [{x: 1}, {y: 2}]
        - [yes, "yes", yes, null, 'null', null, 1, "1", 1, ~, ~]
        """),
    "empty": "",
    "comments-only": "# nothing\n",
    # Merge and value keys without an explicit tag (no "!" in the text): flattened all the same.
    "merge-untagged": textwrap.dedent("""\
        base: {a: 1, b: 2}
        one: {<<: {a: 3}, c: 4}
        two:
          <<: [{x: 1}, {y: 2}]
          y: 3
        ---
        = : the value key
        k: {=: v}
        """),
    "merge-after-many": "".join(f"k{i}: {{a: {i}}}\n" for i in range(50)) + "z: {<<: {q: 1}}\n",
}
BAD = {
    "tab": "apiVersion: v1\nkind: Pod\nmetadata:\n\tname: p\n",
    "unclosed-flow": "apiVersion: v1\nkind: Pod\nspec: {containers: [\n",
    "unhashable-key": "? [a, b]\n: c\n",
    "duplicate-anchor-alias-missing": "a: *nothing\n",
    "bad-indent": "a:\n  b: 1\n c: 2\n",
}


def _shape(value):  # type: ignore[no-untyped-def]
    """A document with every line the loader recorded."""
    if isinstance(value, LineDict):
        return ("map", value.line, tuple((k, value.key_lines.get(k), _shape(v)) for k, v in value.items()))
    if isinstance(value, LineList):
        return ("seq", value.line, tuple(value.item_lines), tuple(_shape(v) for v in value))
    return value


@needs_libyaml
@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_both_loaders_build_the_same_documents_with_the_same_lines(name):
    """Text without anchors (no node shared) is built directly from libyaml's nodes; with anchors,
    through PyYAML's constructor, which keeps what an alias points at."""
    text = SAMPLES[name]
    assert yamlsafe._loader_for(text, "x.yaml").__class__ is yamlsafe._FastLoader  # libyaml is what ran
    fast = [_shape(d) for d in load_documents(text, "x.yaml")]
    pure = [_shape(d) for d in load_documents(text, "x.yaml", use_libyaml=False)]
    assert fast == pure


@pytest.mark.parametrize("name", sorted(BAD))
def test_both_loaders_refuse_the_same_bad_yaml_at_the_same_line(name):
    def line_of(**kw) -> str:
        with pytest.raises(ConfigError) as caught:
            load_documents(BAD[name], "bad.yaml", **kw)
        message = caught.value.message
        assert "\n" not in message
        return message.split(": ", 1)[0]  # "bad.yaml:LINE"

    assert line_of() == line_of(use_libyaml=False)


def test_without_libyaml_the_pure_loader_is_used_with_the_same_result(monkeypatch):
    monkeypatch.setattr(yamlsafe, "_FastLoader", None)  # as when yaml.__with_libyaml__ is False
    text = SAMPLES["block"]
    assert yamlsafe._loader_for(text, "x.yaml").__class__ is yamlsafe._BoundedLoader
    docs = load_documents(text, "x.yaml")
    assert docs[0]["spec"]["template"]["spec"]["containers"][2]["image"] == "reg.example/app:1"
    assert docs[0].line_of("spec") == 6
