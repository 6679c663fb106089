"""The package's import graph: packages in one order, no circles, and the core never reaches the
CLI framework.

The graph is read from the source with ``ast`` (every ``import``, at module level or inside a
function, ``TYPE_CHECKING`` blocks included: a circle that only type hints close is still a
circle in the design). Importing ``a.b.c`` also imports the packages ``a`` and ``a.b``, so an
import adds edges to those ``__init__`` modules too, except to the importer's own ancestors
(a module always runs inside its own package, and a package importing its submodules is
normal).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLI_FRAMEWORKS = ("typer", "click")


def module_names(package_dir: Path) -> dict[str, Path]:
    """Dotted module name → file, for every .py under ``package_dir`` (a package)."""
    base = package_dir.parent
    names: dict[str, Path] = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(base).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


def imports_of(module: str, path: Path) -> list[tuple[str, tuple[str, ...]]]:
    """``(source, names)`` for every import in ``module``: ``import a.b`` is ``("a.b", ())``,
    ``from a import x, y`` is ``("a", ("x", "y"))`` (relative imports resolved)."""
    is_package = path.name == "__init__.py"
    here = module.split(".") if is_package else module.split(".")[:-1]
    found: list[tuple[str, tuple[str, ...]]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.extend((alias.name, ()) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = here[: len(here) - node.level + 1]
                source = ".".join(anchor + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            found.append((source, tuple(alias.name for alias in node.names)))
    return found


def import_graph(package_dir: Path) -> dict[str, set[str]]:
    modules = module_names(package_dir)
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        own_ancestors = {".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 1)}
        edges: set[str] = set()
        for source, names in imports_of(module, path):
            submodules = [f"{source}.{n}" for n in names if f"{source}.{n}" in modules]
            edges.update(submodules)
            # ``from pkg import attr`` runs pkg's __init__ for attr: a real dependency on it,
            # even from inside pkg. ``from pkg import submodule`` inside pkg is not.
            uses_source_itself = not names or len(submodules) < len(names)
            parts = source.split(".")
            for i in range(1, len(parts) + 1):
                target = ".".join(parts[:i])
                if target not in modules or target == module:
                    continue
                if target in own_ancestors and not (target == source and uses_source_itself):
                    continue
                edges.add(target)
        graph[module] = edges
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle (``[a, b, ..., a]``), or None. Iterative DFS: no recursion limit."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    for start in sorted(graph):
        if state.get(start):
            continue
        path = [start]
        state[start] = 1
        stack = [iter(sorted(graph[start]))]
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
                continue
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(sorted(graph[nxt])))
    return None


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for nxt in graph[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


GRAPH = import_graph(ROOT / "imagelint")


def test_the_package_has_no_import_circle() -> None:
    cycle = find_cycle(GRAPH)
    assert cycle is None, "import circle: " + " -> ".join(cycle or ())


def test_the_graph_sees_function_level_and_package_imports() -> None:
    """The assertions here are only as good as the graph: it holds the edges we know exist."""
    # A function-level import (the cluster reader is imported only when --cluster asks for it).
    assert "imagelint.cluster.read_target" in GRAPH["imagelint.cli.target_options"]
    # Importing a submodule runs its package's __init__.
    assert "imagelint.cluster" in GRAPH["imagelint.cli.target_options"]
    assert "imagelint.deploytarget" in GRAPH["imagelint.cluster.nodes"]
    # A relative or "from package import module" import.
    assert "imagelint.core.config" in GRAPH["imagelint.core.engine"]
    assert len(GRAPH) > 100


def test_the_cycle_finder_finds_a_circle(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("from pkg.sub import a\n")  # a package importing its own module: fine
    (package / "sub" / "a.py").write_text("from pkg.sub import b\n")  # a sibling module: no edge to pkg.sub
    (package / "sub" / "b.py").write_text("def late():\n    from pkg import c\n")
    (package / "c.py").write_text("from .sub.a import thing\n")
    graph = import_graph(package)
    assert find_cycle(graph) == ["pkg.c", "pkg.sub", "pkg.sub.a", "pkg.sub.b", "pkg.c"]
    (package / "c.py").write_text("import os\n")
    assert find_cycle(import_graph(package)) is None
    # A module taking a name from its own package's __init__, which imports that module: a circle.
    (package / "sub" / "b.py").write_text("from pkg.sub import VALUE\n")
    (package / "sub" / "__init__.py").write_text("from pkg.sub import a\nVALUE = 1\n")
    assert find_cycle(import_graph(package)) == ["pkg.sub", "pkg.sub.a", "pkg.sub.b", "pkg.sub"]


IMPORTS_CLI_FRAMEWORK = {
    module
    for module, path in module_names(ROOT / "imagelint").items()
    if any(source.split(".")[0] in CLI_FRAMEWORKS for source, _ in imports_of(module, path))
}


def test_nothing_outside_the_cli_reaches_typer() -> None:
    """Not directly, and not through another module: the core is usable without the CLI."""
    assert "imagelint.cli.entry" in IMPORTS_CLI_FRAMEWORK, "the check can see a typer import"
    offenders = {}
    for module in GRAPH:
        # __main__ is the program's entry point: it starts the CLI.
        if module == "imagelint.__main__" or module == "imagelint.cli" or module.startswith("imagelint.cli."):
            continue
        reached = {module} | reachable(GRAPH, module)
        bad = sorted(m for m in reached if m == "imagelint.cli" or m.startswith("imagelint.cli.") or m in IMPORTS_CLI_FRAMEWORK)
        if bad:
            offenders[module] = bad
    assert not offenders, f"modules outside imagelint/cli that reach the CLI: {offenders}"


def test_only_the_cli_imports_typer() -> None:
    """Commands declare their flags with typer itself; nothing else in the package imports it."""
    assert IMPORTS_CLI_FRAMEWORK and all(m.startswith("imagelint.cli.") for m in IMPORTS_CLI_FRAMEWORK), IMPORTS_CLI_FRAMEWORK


# --- the package order (docs/architecture.md) --------------------------------------------------

ARCHITECTURE = ROOT / "docs" / "architecture.md"


def package_order(text: str) -> list[list[str]]:
    """The layers of the ``package-order`` block, bottom first: each line one layer of peers."""
    block = text.split("```package-order\n", 1)[1].split("```", 1)[0]
    layers = [line.split() for line in block.splitlines() if line.strip() and not line.startswith("#")]
    return list(reversed(layers))


def unit_of(module: str, top: str) -> str | None:
    """The package or top-level module of ``top`` that ``module`` lives in (None for ``top`` itself)."""
    parts = module.split(".")
    return parts[1] if parts[0] == top and len(parts) > 1 else None


def imports_against(graph: dict[str, set[str]], layers: list[list[str]], top: str) -> list[str]:
    """Every import that climbs up the order or reaches a peer on its own layer, as text."""
    level = {unit: i for i, layer in enumerate(layers) for unit in layer}
    wrong = []
    for module, edges in sorted(graph.items()):
        here = unit_of(module, top)
        for target in sorted(edges):
            there = unit_of(target, top)
            if here is None or there is None or here == there:
                continue  # the package's own __init__ (its version) is below everything
            if level[there] >= level[here]:
                relation = "a peer of" if level[there] == level[here] else "above"
                wrong.append(f"{module} imports {target} ({there} is {relation} {here})")
    return wrong


def test_every_package_has_a_place_in_the_order() -> None:
    layers = package_order(ARCHITECTURE.read_text(encoding="utf-8"))
    named = [unit for layer in layers for unit in layer]
    assert len(named) == len(set(named)), "a package is named twice in docs/architecture.md"
    units = {unit_of(m, "imagelint") for m in GRAPH} - {None}
    assert units - set(named) == set(), "packages docs/architecture.md does not place"
    assert set(named) - units == set(), "docs/architecture.md names packages that do not exist"


def test_no_import_goes_against_the_package_order() -> None:
    """Imports inside functions and TYPE_CHECKING blocks count: they are dependencies too."""
    layers = package_order(ARCHITECTURE.read_text(encoding="utf-8"))
    assert imports_against(GRAPH, layers, "imagelint") == []


def test_the_order_check_sees_an_import_against_it(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    for sub in ("low", "mid", "peer", "high"):
        (package / sub).mkdir(parents=True)
        (package / sub / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "high" / "run.py").write_text("from pkg.mid import thing\n")
    (package / "mid" / "__init__.py").write_text("from pkg.low import base\n")
    layers = [["low"], ["mid", "peer"], ["high"]]
    assert imports_against(import_graph(package), layers, "pkg") == []
    # A lazy import inside a function, up the order, is found.
    (package / "low" / "late.py").write_text("def f():\n    from pkg.high import run\n")
    # So is one between peers.
    (package / "peer" / "x.py").write_text("import pkg.mid\n")
    assert imports_against(import_graph(package), layers, "pkg") == [
        "pkg.low.late imports pkg.high (high is above low)",
        "pkg.low.late imports pkg.high.run (high is above low)",
        "pkg.peer.x imports pkg.mid (mid is a peer of peer)",
    ]
