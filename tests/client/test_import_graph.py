"""The client package's imports form no loop — counting every import: at the top of a module, inside a
function (imported late) and for the type checker alone — and each client module imports alone in a
fresh interpreter (what a loop would break: a name asked of a module half imported)."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VENV_PYTHON = ROOT / ".venv" / "bin" / "python"
PACKAGE = ROOT / "client"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def client_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(path: Path, modules: Iterable[str]) -> set[str]:
    """The client modules ``path`` imports anywhere in it (``from client.x import y`` is client.x.y
    when that is a module, else client.x)."""
    known = set(modules)
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in known else node.module
                     for a in node.names]
        else:
            assert not isinstance(node, ast.ImportFrom) or node.level == 0, f"{path}: a relative import"
            continue
        out.update(n for n in names if n in known)
    return out


def graph() -> dict[str, set[str]]:
    modules = client_modules()
    return {name: imports_of(path, modules) - {name} for name, path in modules.items()}


def a_cycle(edges: Mapping[str, Iterable[str]]) -> list[str] | None:
    """One loop of ``edges`` as the path that closes it (["a", "b", "a"]), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(edges):
        if start not in state and (found := visit(start)) is not None:
            return found
    return None


def test_the_cycle_finder_finds_a_loop_and_only_a_loop() -> None:
    assert a_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
    assert a_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert a_cycle({"a": {"b"}, "b": {"b2"}, "b2": {"b"}}) == ["b", "b2", "b"]


def test_the_client_package_imports_form_no_loop() -> None:
    edges = graph()
    # the graph is read for real: the loop runs the games' UIs, which share play_base with it
    assert {"client.feed", "client.play_base", "client.games"} <= edges["client.play"]
    assert "client.play_archipelago" in edges["client.games.archipelago"]
    assert "client.play_base" in edges["client.play_archipelago"]
    assert "client.play_base" in edges["client.play_arcmage"]
    assert "client.seating" in edges["client.cli"]
    cycle = a_cycle(edges)
    assert cycle is None, "client imports loop: " + " -> ".join(cycle or [])


def test_each_client_module_imports_alone_in_a_fresh_interpreter() -> None:
    python = str(VENV_PYTHON if VENV_PYTHON.exists() else sys.executable)
    names = sorted(client_modules())
    assert len(names) > 20 and "client.play_salvo" in names

    def alone(name: str) -> tuple[str, int, str]:
        done = subprocess.run([python, "-c", f"import {name}"], cwd=ROOT, capture_output=True, text=True, timeout=120)
        return name, done.returncode, done.stderr

    with ThreadPoolExecutor(max_workers=2) as pool:
        failed = [(name, err) for name, rc, err in pool.map(alone, names) if rc != 0]
    assert failed == []
