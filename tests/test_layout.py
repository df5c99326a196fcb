"""The package's layering: no import circles across agent/ and graphs/, graphs/ reached only
through the app layer, nothing in graphs/ reaching up to the app layer, benches independent of
the tests. Imports inside functions count too (a lazy import is still a dependency)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = path.relative_to(root).with_suffix("").parts
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


def project_graph(*folders: str, root: Path = ROOT) -> dict[str, set[str]]:
    modules = {module_name(p, root): p for folder in folders for p in (root / folder).rglob("*.py")}
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


def in_package(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def upward_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """(importer, imported) pairs that break the layering: graphs/ importing the app layer,
    or anything in agent/ outside the app layer importing graphs/."""
    return sorted(
        (module, dep) for module, deps in graph.items() for dep in deps
        if (in_package(module, "graphs") and in_package(dep, "agent.app"))
        or (in_package(module, "agent") and not in_package(module, "agent.app") and in_package(dep, "graphs"))
    )


def test_agent_and_graphs_have_no_import_cycles():
    graph = project_graph("agent", "graphs")
    assert any(in_package(name, "graphs") for name in graph) and any(in_package(n, "agent.app") for n in graph)
    assert find_cycle(graph) is None


def test_cycle_finder_sees_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_graphs_never_import_the_app_layer_and_only_the_app_layer_imports_graphs():
    assert upward_imports(project_graph("agent", "graphs")) == []


def test_the_checker_catches_a_graph_importing_the_app_layer(tmp_path):
    """A planted `from agent.app.api import ask` in a graph (even inside a function) is caught,
    on a module graph built from files the same way as the project's."""
    (tmp_path / "graphs").mkdir()
    (tmp_path / "agent" / "app").mkdir(parents=True)
    (tmp_path / "agent" / "app" / "api.py").write_text("from graphs.diva import graph\n")
    (tmp_path / "graphs" / "diva.py").write_text("graph = None\n")
    (tmp_path / "graphs" / "auto.py").write_text("def node():\n    from agent.app.api import ask\n")
    graph = project_graph("agent", "graphs", root=tmp_path)
    assert upward_imports(graph) == [("graphs.auto", "agent.app.api")]
    graph["graphs.diva"].add("agent.app.api")  # and a circle through the layers
    assert find_cycle(graph) == ["agent.app.api", "graphs.diva", "agent.app.api"]


def test_benches_do_not_import_tests():
    offenders = sorted(
        path.name for path in (ROOT / "bench").glob("*.py")
        if any(dep == "tests" or dep.startswith("tests.") for dep in imports_of(path))
    )
    assert offenders == []


def test_agent_top_level_is_grouped_into_subpackages():
    loose = sorted(p.name for p in (ROOT / "agent").glob("*.py") if p.name != "__init__.py")
    assert loose == ["context.py", "errors.py", "state.py", "usage.py"]
