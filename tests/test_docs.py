"""The README and the docs show only commands, flags and settings the code has, and every setting
says what it does.

Every `disambig ...` command line in a code block or an inline code span of README.md, CHANGELOG.md
and docs/**/*.md is checked against the CLI's parser: the command exists, each flag belongs to it,
each `--set NAME=...` names a setting of the method it runs, and a value for a flag with choices is
one of them.
"""

from __future__ import annotations

import argparse
import re
import shlex
import sys
from dataclasses import fields
from pathlib import Path

import pytest

from agent.app.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "_gen"))
import reference  # noqa: E402  (the docs' generators: the same view of the code the site shows)

PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md",
         *sorted(p for p in (ROOT / "docs").rglob("*.md") if "_gen" not in p.parts)]
FENCE = re.compile(r"^\s*```")
INLINE = re.compile(r"`([^`\n]+)`")
COMMAND = re.compile(r"(?:^|[\s$(;&|])(?:\S*/)?disambig\s+(-{0,2}[a-z][\w-]*)(.*)")
PLACEHOLDER = re.compile(r"^[A-Z][A-Z0-9_.:/-]*$|\||/|\.\.\.")


def command_lines(text: str) -> list[str]:
    """Command lines that run disambig: in code blocks (comments cut off) and inline code spans."""
    found, in_block = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            in_block = not in_block
            continue
        if in_block and line.lstrip().startswith("#"):
            continue  # a comment in a shell block
        spans = [line] if in_block else INLINE.findall(line)
        for span in spans:
            span = re.split(r"\s#\s", span)[0]
            match = COMMAND.search(span)
            if match and not match.group(2).startswith(("[", "'")):
                found.append(match.group(1) + match.group(2))
    return found


def all_commands() -> list[tuple[str, str]]:
    return [(str(page.relative_to(ROOT)), line) for page in PAGES for line in command_lines(page.read_text())]


def tokens(line: str) -> list[str]:
    line = re.split(r"\s(?:\||&&|;|>)\s", line)[0].rstrip("\\ ")
    try:
        parts = shlex.split(line)
    except ValueError:
        parts = line.split()
    return [part.strip("[]()`,") for part in parts]


def options(sub: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {flag: action for action in sub._actions for flag in action.option_strings}


def setting_names(command: str, args: list[str]) -> set[str]:
    """Settings `--set` may name: the method `--method` picks (auto by default), any method for eval."""
    classes = reference.method_classes()
    if command == "chat":
        return {f.name for f in fields(classes["chat"])}
    if command == "eval":
        return {f.name for cls in classes.values() for f in fields(cls)}
    method = args[args.index("--method") + 1] if "--method" in args[:-1] else "auto"
    return {f.name for f in fields(classes.get(method, classes["auto"]))}


def test_the_pages_show_disambig_commands_at_all():
    lines = all_commands()
    assert len(lines) > 40, lines  # the checker finds what it should check
    assert any(line.startswith("ask") and "--budget" in line for _, line in lines)


@pytest.mark.parametrize("page,line", all_commands())
def test_every_command_and_flag_shown_exists_in_the_parser(page, line):
    commands = reference.subcommands(build_parser())
    args = tokens(line)
    name = args[0]
    if name.startswith("-"):
        assert name in ("-h", "--help"), f"{page}: `disambig {line}`"
        return
    assert name in commands, f"{page}: `disambig {line}`: no command {name!r}"
    flags = options(commands[name][0])
    for position, arg in enumerate(args[1:], 1):
        if not arg.startswith("--"):
            continue
        flag, _, inline_value = arg.partition("=")
        assert flag in flags, f"{page}: `disambig {line}`: {name} has no flag {flag}"
        action = flags[flag]
        value = inline_value or (args[position + 1] if position + 1 < len(args) and action.nargs != 0 else "")
        if action.choices and value and not PLACEHOLDER.search(value) and not value.startswith("$"):
            assert value in action.choices, f"{page}: `disambig {line}`: {flag} {value!r} not in {action.choices}"
        if flag == "--set" and value and "=" in value:
            setting = value.split("=")[0]
            if not PLACEHOLDER.search(setting):
                assert setting in setting_names(name, args), f"{page}: `disambig {line}`: no setting {setting!r}"


def test_a_flag_the_parser_lacks_is_caught():
    """The checker itself: a made-up flag and a made-up setting fail it."""
    with pytest.raises(AssertionError):
        test_every_command_and_flag_shown_exists_in_the_parser("x", "ask Q --no-such-flag")
    with pytest.raises(AssertionError):
        test_every_command_and_flag_shown_exists_in_the_parser("x", "ask Q --set no_such_setting=1")
    with pytest.raises(AssertionError):
        test_every_command_and_flag_shown_exists_in_the_parser("x", "ask Q --budget lavish")


@pytest.mark.parametrize("method", sorted(reference.method_classes()))
def test_every_setting_has_a_description(method):
    cls = reference.method_classes()[method]
    for field in fields(cls):
        text, env = reference.description(field)
        assert len(text.strip()) >= 10, f"{cls.__name__}.{field.name} has no description"
        assert reference.default_text(cls, field), f"{cls.__name__}.{field.name}: no default shown"


def test_every_cli_argument_has_help():
    for name, (sub, help_) in reference.subcommands(build_parser()).items():
        assert help_, f"disambig {name} has no help"
        for action in sub._actions:
            if action.option_strings and not isinstance(action, argparse._HelpAction):
                assert action.help or action.dest in ("seed",), f"disambig {name} {action.option_strings} has no help"


WORK_HISTORY = re.compile(r"\bstop \d|\bissue \d|#\d\d\b|SPEC\.md|/work/|/root/|\bseed 00\d")


def user_facing_texts() -> list[tuple[str, str]]:
    texts = [(str(p.relative_to(ROOT)), p.read_text()) for p in PAGES]
    texts += [(str(p.relative_to(ROOT)), p.read_text()) for p in sorted((ROOT / "agent" / "data").glob("*.md"))]
    parser = build_parser()
    for name, (sub, help_) in reference.subcommands(parser).items():
        texts.append((f"disambig {name} --help", sub.format_help()))
    for method, cls in reference.method_classes().items():
        texts += [(f"{cls.__name__}.{f.name}", f.metadata.get("description", "")) for f in fields(cls)]
    return texts


def test_no_work_history_or_machine_paths_in_what_users_read():
    found = [(where, match.group(0)) for where, text in user_facing_texts() for match in WORK_HISTORY.finditer(text)]
    assert not found, found


def test_the_readme_is_short_and_runs_the_ci_test_command():
    """The README is for the person who arrives (the docs hold the rest), and its test command is
    exactly what CI runs."""
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 200
    assert "```bash\nmake test\n```" in readme
    assert (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1] == "make test"


def test_the_readmes_links_point_to_files_in_the_repository():
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", (ROOT / "README.md").read_text())
    local = [link for link in links if not link.startswith(("http://", "https://"))]
    assert len(local) >= 10
    assert [link for link in local if not (ROOT / link).exists()] == []
