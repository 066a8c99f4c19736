"""The house stays as ARCHITECTURE.md draws it: no import circle between modules, no import from a lower floor to a
higher one, no source file over 450 lines, at most 8 files at the top of ``judge/``.

Imports are read with ``ast`` from every module of ``src/relgrade`` (those inside functions too: a lazy import is
still an arrow). Importing ``relgrade.a.b`` runs ``relgrade/a/__init__.py`` as well, but that parent is not counted
as an arrow of the importer: only the modules named are.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "relgrade"

# Floors from the ground up (ARCHITECTURE.md). A unit is a sub-package of relgrade or one of its top-level modules;
# a unit may import only units on lower floors (and itself).
FLOORS: list[set[str]] = [
    {"_errors", "_words", "_version"},
    {"_defaults", "_redact", "_intervals", "_verdict"},
    {"stats"},
    {"io"},
    {"versioning", "adapters", "label", "judge"},
    {"metrics", "ragas"},
    {"calibration", "gating", "audit"},
    {"hybrid", "history"},
    {"demo"},
    {"cli"},
    {"relgrade"},  # the package's face (relgrade/__init__.py): lazy names for users, imported by no module
]
FLOOR = {unit: level for level, units in enumerate(FLOORS) for unit in units}
MAX_LINES = 450
MAX_JUDGE_TOP = 8


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules(root: Path = SRC) -> dict[str, Path]:
    return {_module_name(p, root): p for p in sorted(root.rglob("*.py"))}


def _resolve(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = importer.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(modules: dict[str, Path]) -> dict[str, set[str]]:
    """``{module: {relgrade modules it imports}}``: ``from pkg import name`` counts ``pkg.name`` when that is a
    module, else ``pkg``."""
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                found = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(name, path.name == "__init__.py", node)
                found = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            else:
                continue
            targets.update(t for t in found if t in modules and t != name)
        graph[name] = targets
    return graph


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return _imports(_modules())


def test_every_unit_has_a_floor(graph):
    unplaced = sorted({_unit(m) for m in graph} - set(FLOOR))
    assert not unplaced, f"give these a floor in FLOORS and ARCHITECTURE.md: {unplaced}"


def test_no_import_circle(graph):
    circles = _circles(graph)
    assert not circles, "\n".join(" <-> ".join(c) for c in circles)


def test_imports_run_down_the_floors_only(graph):
    up = sorted(f"{a} -> {b} (floor {FLOOR[_unit(a)]} -> {FLOOR[_unit(b)]})"
                for a, targets in graph.items() for b in targets
                if _unit(a) != _unit(b) and FLOOR[_unit(b)] >= FLOOR[_unit(a)])
    assert not up, "\n".join(up)


def test_no_command_module_outside_cli():
    """Click commands live in relgrade.cli; nothing below it imports click or a command module."""
    offenders = sorted(m for m, p in _modules().items() if _unit(m) != "cli"
                       and any(isinstance(n, (ast.Import, ast.ImportFrom))
                               and "click" in ([a.name for a in n.names] if isinstance(n, ast.Import) else [n.module])
                               for n in ast.walk(ast.parse(p.read_text(encoding="utf-8")))))
    assert offenders == []


def test_no_source_file_over_the_limit():
    long = sorted((len(p.read_text(encoding="utf-8").splitlines()), str(p.relative_to(SRC)))
                  for p in SRC.rglob("*.py") if len(p.read_text(encoding="utf-8").splitlines()) > MAX_LINES)
    assert long == []


def test_judge_top_is_small():
    top = sorted(p.name for p in (SRC / "judge").glob("*.py"))
    assert len(top) <= MAX_JUDGE_TOP, top


def test_the_checks_can_fail(tmp_path):
    """The walker sees a circle, an arrow up and a relative import where they are."""
    pkg = tmp_path / "relgrade"
    (pkg / "io").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "_errors.py").write_text("from relgrade.io import _a\n")
    (pkg / "io" / "__init__.py").write_text("")
    (pkg / "io" / "_a.py").write_text("def f():\n    from . import _b\n")
    (pkg / "io" / "_b.py").write_text("from relgrade.io._a import f\n")
    g = _imports(_modules(pkg))
    assert _circles(g) == [["relgrade.io._a", "relgrade.io._b"]]
    assert "relgrade.io._a" in g["relgrade._errors"] and FLOOR["io"] > FLOOR["_errors"]
