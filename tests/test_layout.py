"""The package's layering: no import circles, graphs/ reached only through the app layer,
benches independent of the tests. Imports inside functions count too (a lazy import is
still a dependency)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Every module `path` imports, at any depth of its code."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def project_graph(*folders: str) -> dict[str, set[str]]:
    modules = {module_name(p): p for folder in folders for p in (ROOT / folder).rglob("*.py")}
    return {name: {dep for dep in imports_of(path) if dep in modules and dep != name}
            for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                return stack[stack.index(dep):] + [dep]
            if dep not in state and (cycle := visit(dep)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_agent_has_no_import_cycles():
    assert find_cycle(project_graph("agent")) is None


def test_cycle_finder_sees_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_only_the_app_layer_imports_graphs():
    offenders = sorted(
        module_name(path) for path in (ROOT / "agent").rglob("*.py")
        if not module_name(path).startswith("agent.app")
        and any(dep == "graphs" or dep.startswith("graphs.") for dep in imports_of(path))
    )
    assert offenders == []


def test_benches_do_not_import_tests():
    offenders = sorted(
        path.name for path in (ROOT / "bench").glob("*.py")
        if any(dep == "tests" or dep.startswith("tests.") for dep in imports_of(path))
    )
    assert offenders == []


def test_agent_top_level_is_grouped_into_subpackages():
    loose = sorted(p.name for p in (ROOT / "agent").glob("*.py") if p.name != "__init__.py")
    assert loose == ["context.py", "errors.py", "state.py", "usage.py"]
