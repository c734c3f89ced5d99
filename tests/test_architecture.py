"""The house rules, checked: one-way layers (import-linter contracts in pyproject.toml), the
engine on the standard library alone, no cycle between layers, and the type checker.

docs/architecture.md explains the layers and what each may import.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("referee", "vision", "hardware", "web")
#: The layers as units (a module belongs to the longest prefix listed; ``vision`` is runtime vision).
UNITS = (
    "referee.errors",
    "referee.gizmos",
    "referee.contrivance",
    "referee.game",
    "referee.observation",
    "referee.events",
    "referee.tracker",
    "referee.simulation",
    "referee.app",
    "referee",
    "vision.training",
    "vision",
    "hardware",
    "web",
)
ENGINES = ("referee/gizmos", "referee/contrivance")
#: The engines' shared error model, below them (standard library only too).
ENGINE_BASE = "referee/errors.py"


def _run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)


def _unit(module: str) -> str:
    return max((u for u in UNITS if module == u or module.startswith(u + ".")), key=len)


def test_import_contracts_hold() -> None:
    # lint-imports' own entry point, run by this interpreter (not the venv's script, whose
    # #! line names the interpreter of whichever checkout installed it).
    lint = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"
    done = _run(sys.executable, "-c", lint, "--no-cache")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout, done.stdout


def test_the_engines_import_only_the_standard_library() -> None:
    """... and the shared error model below them (the only project module an engine may import)."""
    checked = 0
    base = ENGINE_BASE.removesuffix(".py").replace("/", ".")
    for folder in (*ENGINES, ENGINE_BASE):
        package = folder.removesuffix(".py").replace("/", ".")
        paths = [ROOT / folder] if folder.endswith(".py") else sorted((ROOT / folder).rglob("*.py"))
        for path in paths:
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    ok = name.split(".")[0] in sys.stdlib_module_names or name.startswith((package, base))
                    assert ok, f"{path.relative_to(ROOT)}:{node.lineno} imports {name}, not the stdlib"
            checked += 1
    assert checked >= 9  # the Gizmos engine's modules and the error model at least


def test_no_cycle_between_layers() -> None:
    graph = grimp.build_graph(*PACKAGES)
    edges: dict[str, set[str]] = {}
    for importer in graph.modules:
        for imported in graph.find_modules_directly_imported_by(importer):
            a, b = _unit(importer), _unit(imported)
            if a != b:
                edges.setdefault(a, set()).add(b)
    assert edges["referee.app"] >= {"vision", "web", "referee.tracker"}  # the graph is really read
    try:
        order = list(TopologicalSorter(edges).static_order())
    except CycleError as exc:
        pytest.fail(f"layers import each other in a circle: {exc.args[1]}")
    assert order.index("referee.gizmos") < order.index("referee.tracker") < order.index("referee.app")
    assert order.index("referee.errors") < min(
        order.index("referee.gizmos"), order.index("referee.contrivance")
    )


def test_the_rules_and_the_tracker_load_without_opencv_numpy_or_flask() -> None:
    code = (
        "import sys, referee, referee.game, referee.gizmos, referee.tracker, referee.simulation; "
        "heavy = sorted({'cv2', 'numpy', 'flask', 'serial'} & set(sys.modules)); "
        "print(heavy); sys.exit(1 if heavy else 0)"
    )
    done = _run(sys.executable, "-c", code)
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_passes() -> None:
    done = _run(sys.executable, "-m", "mypy")  # the packages and settings come from pyproject.toml
    assert done.returncode == 0, done.stdout + done.stderr
