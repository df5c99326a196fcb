"""The steps every `disambig serve` backend shares: show the plan (`--print-config`), check that
the server package is installed, write its config, announce, then become the server.

One place for them, so the development server (serve.py) and the production one (deploy.py)
cannot drift apart in what `--print-config` shows or what a missing extra says.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

from agent.errors import DisambigError


def launch(args, *, config: dict, config_path: Path | None, command: list[str], package: str, missing: str,
           environment: Callable[[], dict], banner: list[str], check: Callable[[], None] = lambda: None) -> int:
    """Print the config and command when asked; else write the config (unless the user gave
    their own: `config_path` None) once `check` passed, build the environment (which may prepare
    a database) and exec `command` from the config's directory: this process becomes the server."""
    if args.print_config:
        print(json.dumps(config, indent=2))
        print(" ".join(command), file=sys.stderr)
        return 0
    if importlib.util.find_spec(package) is None:
        raise DisambigError(missing)
    check()  # refuse before anything is written
    if config_path is not None:
        config_path.parent.mkdir(parents=True, exist_ok=True)
        config_path.write_text(json.dumps(config, indent=2))
    env = environment()
    for line in banner:
        print(line, file=sys.stderr, flush=True)
    os.chdir(workdir(args, config_path))
    os.execve(sys.executable, command, env)
    return 0  # not reached: exec replaced this process


def workdir(args, config_path: Path | None) -> Path:
    """The server's working directory: where its config lives (the in-memory server keeps its
    threads there, Aegra looks there for alembic.ini)."""
    return (config_path or Path(args.config).resolve()).parent
