"""The package's import graph: no circles, and the core never reaches the CLI framework.

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
    """The assertion above is only as good as the graph: it holds the edges we know exist."""
    # A function-level import (the cluster reader is imported only when --cluster asks for it).
    assert "imagelint.cluster.read_target" in GRAPH["imagelint.target.options"]
    # Importing a submodule runs its package's __init__.
    assert "imagelint.cluster" in GRAPH["imagelint.target.options"]
    assert "imagelint.target" in GRAPH["imagelint.cluster.nodes"]
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
