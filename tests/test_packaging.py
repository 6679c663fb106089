"""The package list in pyproject.toml is explicit (because matrices/ is mapped into the
package); keep it complete, and keep the core free of the CLI framework."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent


def test_every_subpackage_is_listed_in_pyproject() -> None:
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {"imagelint.matrices"}
    for init in (ROOT / "imagelint").rglob("__init__.py"):
        rel = init.parent.relative_to(ROOT)
        found.add(".".join(rel.parts))
    assert found == listed, f"pyproject packages differ: missing {sorted(found - listed)}, extra {sorted(listed - found)}"


def test_core_never_imports_typer() -> None:
    offenders = []
    for path in (ROOT / "imagelint").rglob("*.py"):
        if "cli" in path.relative_to(ROOT / "imagelint").parts:
            continue
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            if any(n == "typer" or n.startswith("typer.") or n == "click" for n in names):
                offenders.append(str(path.relative_to(ROOT)))
    assert not offenders, f"core modules import the CLI framework: {offenders}"
