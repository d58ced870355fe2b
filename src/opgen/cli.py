"""The `opgen` command line: a thin front end over the targets and the tools.

`main(argv)` returns the exit status: 0 success, 1 bad input (diagnostics on
stderr), 2 bad usage. It never lets a traceback reach the user for bad input.
Each command (`opgen.targets.registry`: opgen's own and other packages') is a
target or a tool (`opgen.targets.contract`), and its module is imported only
when that command runs or every command is listed: a run pays for its own
command alone. A target runs as `opgen.targets.contract.run_target` says, a
tool as its own `run`. Usage errors name the command's own usage, and a misspelt
command or flag gets the nearest one as a suggestion.
"""

from __future__ import annotations

import argparse
import functools
import gc
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NoReturn, TextIO, cast

from opgen import __version__
from opgen.diagnostics import SpecError, did_you_mean, write_diagnostics
from opgen.targets.contract import Target, Tool, UsageError, is_target, run_target
from opgen.targets.registry import COMMANDS, TargetLoadError, load_command, plugin_commands

_BUILTIN = frozenset(COMMANDS)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser; with `only`, a command's name, just that command, so that a run imports
    no other command's module and builds no other parser (every command is listed when
    `only` names none, for `opgen --help` and the usage error)."""
    parser, commands = _top_parser()
    plugins = {} if only in _BUILTIN else plugin_commands(_BUILTIN)
    known = {**COMMANDS, **plugins}
    if only in known:
        _add_command(commands, only, known[only])
        return parser
    for name, reference in known.items():
        _add_command(commands, name, reference)
    return parser


def _top_parser() -> tuple[
    argparse.ArgumentParser, argparse._SubParsersAction[argparse.ArgumentParser]
]:
    """The parser without its commands, and where they are added."""
    parser = argparse.ArgumentParser(
        formatter_class=_Formatter,
        prog="opgen",
        description="Generate operator code from PyTorch's operator spec language.",
    )
    parser.add_argument("--version", action="version", version=f"opgen {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    return parser, commands


def _unknown_command(command: str | None) -> None:
    """A usage error (SystemExit 2) for a command no package registers, with the nearest."""
    if command is None or command in _BUILTIN:
        return
    known = [*_BUILTIN, *plugin_commands(_BUILTIN)]
    if command in known:
        return
    hint = did_you_mean(command, known, listed_up_to=len(known))
    _top_parser()[0].error(f"argument COMMAND: invalid choice: '{command}'{hint}")


def _unrecognized(parser: argparse.ArgumentParser, command: str, extras: Sequence[str]) -> NoReturn:
    """The usage error for arguments the command does not take, in the command's own words
    (its usage, `opgen check: error: ...`), with the nearest flag to a misspelt one."""
    sub: argparse.ArgumentParser = next(
        action.choices[command]
        for action in parser._actions
        if isinstance(action, argparse._SubParsersAction)
    )
    flags = [option for action in sub._actions for option in action.option_strings]
    misspelt = next((extra for extra in extras if extra.startswith("-")), None)
    hint = "" if misspelt is None else did_you_mean(misspelt.partition("=")[0], flags)
    sub.error(f"unrecognized arguments: {' '.join(extras)}{hint}")


def _add_command(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], name: str, reference: str
) -> None:
    try:
        command = load_command(reference)
    except TargetLoadError as e:
        sub = commands.add_parser(name, help=f"(cannot be loaded: {e})", formatter_class=_Formatter)
        sub.set_defaults(run=functools.partial(_unloadable, name, str(e)))
        return
    sub = commands.add_parser(
        name, help=command.help, description=command.description, formatter_class=_Formatter
    )
    command.add_arguments(sub)
    if is_target(command):
        sub.set_defaults(run=functools.partial(_run_target, command))
    else:
        sub.set_defaults(run=cast(Tool, command).run)


class _Formatter(argparse.HelpFormatter):
    """argparse's formatter, sized to the terminal as argparse sizes it, without importing
    `shutil` (and with it `bz2`, `lzma` and `fnmatch`) for that: every parser built makes a
    formatter, so every run would pay for the import (about 2.5 ms)."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        if width is None:
            width = _terminal_columns() - 2
        super().__init__(prog, indent_increment, max_help_position, width)


def _terminal_columns() -> int:
    """`shutil.get_terminal_size().columns`: $COLUMNS, else standard output's terminal,
    else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def _run_target(target: Target[Any], args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """A target's run from parsed flags: usage problems exit 2, before anything is read."""
    try:
        options = target.options(args)
    except UsageError as e:
        err.writelines(f"opgen {target.name}: error: {problem}\n" for problem in e.problems)
        return 2
    return run_target(target, options, out, err, retain=args.retain)


def _unloadable(name: str, problem: str, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    err.write(f"opgen {name}: error: the target cannot be loaded: {problem}\n")
    return 2


def _command_of(argv: Sequence[str]) -> str | None:
    """The command `argv` names, if it starts with one (else the whole parser is built)."""
    return argv[0] if argv and not argv[0].startswith("-") else None


def main(
    argv: Sequence[str] | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
    *,
    retain: Callable[[object], object] | None = None,
) -> int:
    """Run the command `argv` asks for; its exit status.

    `retain`, if given, receives the large structures the command builds (the
    model, what a dump derives from it), which then outlive the command instead
    of being freed, object by object, when it returns: `entry()` exits the
    process right after, and the operating system reclaims them at once.
    """
    out = out or sys.stdout
    err = err or sys.stderr
    argv = sys.argv[1:] if argv is None else argv
    command = _command_of(argv)
    try:
        _unknown_command(command)
        parser = build_parser(command)
        args, extras = parser.parse_known_args(argv)
        if extras:
            _unrecognized(parser, args.command, extras)
    except SystemExit as e:  # argparse: --help/--version exit 0, usage errors exit 2
        return int(e.code or 0)
    args.retain = retain or _let_go
    run: Callable[[argparse.Namespace, TextIO, TextIO], int] = args.run
    try:
        with _collection_paused():
            return run(args, out, err)
    except SpecError as e:
        write_diagnostics(e.diagnostics, err)
        return 1
    except UsageError as e:  # found while running, e.g. a --torch-version a tool reads late
        err.writelines(f"opgen {args.command}: error: {problem}\n" for problem in e.problems)
        return 2
    except BrokenPipeError:  # e.g. `opgen dump | head`
        return 0


def entry() -> NoReturn:
    """The process entry point (`opgen`, `python -m opgen`).

    The model is a few hundred thousand objects that live until the process
    ends, and the operating system reclaims them all at once; freeing them one
    by one is wasted time. So the cyclic collector stays off for the whole
    process (turning it back on would make the next allocation scan and free
    the dead model: about 0.4 s on ATen), the command hands what it built to
    `retained` rather than freeing it when it returns (about 30 ms after
    `opgen dump --signatures`), and once the command is done and its output
    flushed the process leaves with `os._exit`, skipping the interpreter's
    teardown (about 0.3 s after `opgen aten`). opgen registers no exit handlers.
    """
    gc.disable()
    retained: list[object] = []
    status = main(retain=retained.append)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:  # the reader went away, as `opgen dump | head` does
        pass
    os._exit(status)


def _let_go(_: object) -> None:
    """`main`'s default: nothing outlives the command."""


@contextmanager
def _collection_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a command runs.

    The model is ~10^5 small acyclic objects that live until the command ends;
    reference counting frees everything that dies, and the collector's repeated
    scans of the growing heap cost about a third of the run time.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
