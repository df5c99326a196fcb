"""The graphs for a server that loads them from a file (Aegra): `<this file>:<graph name>`.

Aegra executes the named file as a fresh module that is not in sys.modules, so a graph file
loaded that way cannot resolve its own dataclass annotations (the chat graph's context schema)
at run time. This file instead imports each graph by its module name, so the graph and its
schemas live in properly registered modules.
"""

from __future__ import annotations

from importlib import import_module


def __getattr__(name: str):
    from graphs.registry import METHODS

    modules = {method: module for method, (module, _) in METHODS.items()} | {"chat": "graphs.chat"}
    if name not in modules:
        raise AttributeError(name)
    return import_module(modules[name]).graph
