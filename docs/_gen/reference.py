"""Reference pages generated from the code at docs build time, so they cannot drift from it.

- the CLI from `agent.app.cli.build_parser` (every command, flag, default, choice and help text);
- the settings from the context dataclasses' field descriptions (the base `Context` and each
  method's own class), with their environment variables and defaults;
- the stream events from the `{"event": ...}` dicts the code emits (found by reading the source);
- each graph as Mermaid, from the compiled graph itself (`get_graph(xray=True)`).
"""

from __future__ import annotations

import argparse
import ast
import inspect
import re
from dataclasses import MISSING, fields
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENV = re.compile(r"\s*\(env (\w+)\)$")


def cell(text: object) -> str:
    """Text safe inside a Markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")


# ---------------------------------------------------------------- CLI

def subcommands(parser: argparse.ArgumentParser) -> dict[str, tuple[argparse.ArgumentParser, str]]:
    """{name: (subparser, one-line help)} in the order the parser lists them."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            return {name: (sub, helps.get(name, "")) for name, sub in action.choices.items()}
    return {}


def _default(action: argparse.Action) -> str:
    if action.default in (None, False, argparse.SUPPRESS) or action.nargs == 0:
        return ""
    return f"`{action.default}`"


def cli_markdown() -> str:
    from agent.app.cli import build_parser

    parser = build_parser()
    out = [f"`disambig` — {parser.description}", ""]
    commands = subcommands(parser)
    out += ["| command | what it does |", "|---|---|"]
    out += [f"| [`{name}`](#disambig-{name}) | {cell(help_)} |" for name, (_, help_) in commands.items()]
    for name, (sub, help_) in commands.items():
        usage = sub.format_usage().replace("usage: ", "").strip()
        out += ["", f"## disambig {name}", "", help_[:1].upper() + help_[1:] + ".", "", "```text", usage, "```", "",
                "| argument | what it does |", "|---|---|"]
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            names = ", ".join(action.option_strings) or (action.metavar or action.dest)
            if action.option_strings and action.nargs != 0:
                names += f" {action.metavar or action.dest.upper()}"
            help_text = action.help or ""
            notes = [f"default {_default(action)}"] if _default(action) and "default" not in help_text else []
            if action.choices:
                notes.append("one of: " + ", ".join(f"`{c}`" for c in action.choices))
            if isinstance(action, argparse._AppendAction) and "repeatable" not in help_text:
                notes.append("repeatable")
            text = help_text + (f" ({'; '.join(notes)})" if notes else "")
            out.append(f"| `{names}` | {cell(text)} |")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- settings

def _class_defaults(cls: type) -> dict[str, str]:
    """{field: source text of its default} read from the class body (`os.cpu_count() or 2`)."""
    try:
        tree = ast.parse(inspect.getsource(cls))
    except (OSError, TypeError):
        return {}
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and isinstance(node.value, ast.Call):
            call = node.value
            name = getattr(call.func, "id", getattr(call.func, "attr", ""))
            if name == "_env_field" and len(call.args) >= 2:
                found[node.target.id] = ast.unparse(call.args[1])
    return found


def default_text(cls: type, f) -> str:
    """A field's default as a reader should see it, never this machine's value."""
    if f.default is not MISSING:
        return f"`{f.default!r}`" if f.default != "" else "empty"
    factory = f.default_factory
    if getattr(factory, "__name__", "") != "<lambda>":
        doc = inspect.getdoc(factory) or factory.__name__
        return doc.split("\n")[0]
    for owner in cls.__mro__:
        source = _class_defaults(owner).get(f.name)
        if source is not None:
            return "empty" if source in ('""', "''") else f"`{source}`"
    return ""


def description(f) -> tuple[str, str]:
    """(description without its env note, env variable or "")."""
    text = f.metadata.get("description", "")
    match = ENV.search(text)
    return (text[: match.start()], match.group(1)) if match else (text, "")


def settings_table(cls: type, names: list[str] | None = None) -> str:
    rows = ["| setting | env | default | description |", "|---|---|---|---|"]
    for f in fields(cls):
        if names is not None and f.name not in names:
            continue
        text, env = description(f)
        type_ = getattr(f.type, "__name__", None) or str(f.type)
        choices = _choices(cls).get(f.name)
        if choices:
            text += " (one of: " + ", ".join(f"`{c}`" for c in choices) + ")"
        rows.append(f"| `{f.name}` | {f'`{env}`' if env else ''} | {cell(default_text(cls, f))} | {cell(text)} |")
    return "\n".join(rows) + "\n"


def _choices(cls: type) -> dict:
    from agent.context import choices

    return choices(cls)


def method_classes() -> dict[str, type]:
    """{graph name: its context class} for every method and the chat graph."""
    from graphs.registry import METHODS, context_schema
    import graphs.chat

    classes = {name: context_schema(name) for name in METHODS}
    classes["chat"] = graphs.chat.builder.context_schema
    return classes


def own_settings(cls: type) -> list[str]:
    """The fields a method's class adds to (or redefines over) the base Context."""
    from agent.context import Context

    base = {f.name: f for f in fields(Context)}
    return [f.name for f in fields(cls) if f.name not in base or f.default != base[f.name].default]


def settings_markdown(method: str | None = None) -> str:
    from agent.context import Context

    if method is None:
        return settings_table(Context)
    cls = method_classes()[method]
    names = own_settings(cls)
    if not names:
        return f"`{method}` reads the base settings only.\n"
    return settings_table(cls, names)


def all_settings_markdown() -> str:
    out = ["## Base settings", "", "Every method reads these (`agent.context.Context`).", "", settings_markdown()]
    for method, cls in method_classes().items():
        out += [f"## {method}", "", f"`{cls.__module__}.{cls.__name__}`: the settings it adds to the base "
                "or whose default it changes.", "", settings_markdown(method)]
    return "\n".join(out)


# ---------------------------------------------------------------- stream events

def _event_dicts(path: Path):
    tree = ast.parse(path.read_text())
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(function):
            if not isinstance(node, ast.Dict):
                continue
            keys = [k.value if isinstance(k, ast.Constant) else "**" for k in node.keys]
            if "event" not in keys:
                continue
            value = node.values[keys.index("event")]
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                others = [k for k in keys if k not in ("event", "**")]
                yield value.value, others, function.name


def events_markdown() -> str:
    """Every event kind the code sends, its fields and where it comes from."""
    found: dict[str, dict] = {}
    for path in sorted([*ROOT.glob("agent/**/*.py"), *ROOT.glob("graphs/*.py")]):
        for kind, keys, function in _event_dicts(path):
            entry = found.setdefault(kind, {"keys": [], "where": []})
            entry["keys"] += [k for k in keys if k not in entry["keys"]]
            where = f"`{path.relative_to(ROOT).with_suffix('').as_posix().replace('/', '.')}.{function}`"
            if where not in entry["where"]:
                entry["where"].append(where)
    rows = ["| event | fields | sent by |", "|---|---|---|"]
    for kind in sorted(found):
        entry = found[kind]
        rows.append(f"| `{kind}` | {', '.join(f'`{k}`' for k in entry['keys'])} | {', '.join(entry['where'])} |")
    return "\n".join(rows) + "\n"


# ---------------------------------------------------------------- graphs

def graph_mermaid(name: str) -> str:
    """The compiled graph drawn by LangGraph itself, subgraphs included."""
    if name == "chat":
        import graphs.chat as module
    else:
        from graphs.registry import load_method

        module = load_method(name)
    return module.graph.get_graph(xray=True).draw_mermaid()


# ---------------------------------------------------------------- bench scripts

def bench_markdown() -> str:
    """Each script under bench/ with the first paragraph of its docstring."""
    rows = ["| script | what it measures or provides |", "|---|---|"]
    for path in sorted((ROOT / "bench").glob("*.py")):
        doc = ast.get_docstring(ast.parse(path.read_text()))
        if not doc:
            continue
        summary = " ".join(doc.split("\n\n")[0].split())
        rows.append(f"| `bench/{path.name}` | {cell(summary)} |")
    return "\n".join(rows) + "\n"
