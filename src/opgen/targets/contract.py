"""The one shape every command has, and what the command line does with a target's result.

A command is an object with a `name`, a one-line `help`, a `description` and
`add_arguments(parser)`, its flags. It is one of two kinds:

- a *target* generates files, in three steps that the command line runs in order:

    options(args) -> Options    the flags as a frozen options object; a usage problem
                                (flags that contradict each other) raises `UsageError`
    read(options) -> Model      reads the inputs into an immutable model: everything the
                                files need, planned; bad input raises `SpecError`
    emit(model, options) -> Generated
                                the files (`OutputSet`s) and what to say about them;
                                never writes a file

  Whatever a target's own options hold, `options.run` is a `RunOptions`: where and how
  the files are delivered (the output directory, in how many processes, a dry run, the
  dependency list, a listing instead of a write). `deliver` then does what they say with
  the `Generated` result, the same way for every target: prints its notices, warnings
  and notes, writes the sets through `opgen.writer.write_files` (atomic, only changed
  files), writes the dependency lists, and prints the summary. `generate(target,
  options)` is the Python API: the `Generated` of a run, without a command line.

- a *tool* (`opgen check`, `dump`, `diff`, `coverage`) generates nothing: its
  `run(args, out, err)` does the whole command and returns the exit status.

Commands are registered in `opgen.targets.registry` as `module:attribute` references, and
other packages add theirs through the `opgen.targets` entry-point group. opgen's
targets are `LazyTarget`s, which import their reading and emitting only when they run.
"""

from __future__ import annotations

import argparse
import enum
import os
from collections.abc import Callable, Sequence
from importlib import import_module
from typing import TYPE_CHECKING, Any, Generic, Protocol, TextIO, TypeGuard, TypeVar

from opgen.frozen import frozen

if TYPE_CHECKING:
    from opgen.diagnostics import Diagnostic
    from opgen.output import OutputSet
    from opgen.writer import WriteReport


class UsageError(Exception):
    """Flags that contradict each other or name nothing: the run stops with status 2."""

    def __init__(self, *problems: str) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


class Listing(enum.Enum):
    """What a run prints instead of writing (the extension targets' build systems ask)."""

    FILES = "files"  # every file it would generate
    SOURCES = "sources"  # the C++ sources to compile


@frozen
class RunOptions:
    """Where and how a run delivers its files, whichever the target."""

    output_dir: str  # where the files go (a target may write other roots beside it)
    jobs: int = 1  # processes rendering the files (`opgen.forked`); never changes output
    dry_run: bool = False  # generate and check, write no generated file
    output_dependencies: str | None = None  # also write the CMake lists of generated files
    listing: Listing | None = None  # print these paths instead of writing anything


@frozen(eq=False)
class Generated:
    """What a run made: the files, and what the command line says about them."""

    outputs: Sequence[OutputSet]
    # (file-name prefix, set): one CMake list per set with `--output-dependencies`.
    dependency_lists: Sequence[tuple[str, OutputSet]] = ()
    # Printed on stderr before anything else: how the run was set up (for a drop-in, how
    # its torch release was chosen, `opgen.targets.torch_version`).
    notices: Sequence[str] = ()
    notes: Sequence[str] = ()  # printed on stdout before anything is written
    warnings: Sequence[Diagnostic] = ()  # printed on stderr, located
    sources: Sequence[str] = ()  # the C++ sources to compile, relative to the output dir
    # A dry run renders every file (so bad input fails it too) instead of only listing.
    dry_run_renders: bool = False
    # The line printed after writing, from what was written.
    summary: Callable[[WriteReport], str] | None = None


class TargetOptions(Protocol):
    @property
    def run(self) -> RunOptions: ...


OptionsT = TypeVar("OptionsT", bound=TargetOptions)


class Command(Protocol):
    """What every command has: its name, its help and its flags."""

    @property
    def name(self) -> str: ...  # the subcommand: `opgen <name>`

    @property
    def help(self) -> str: ...  # one line, for `opgen --help`

    @property
    def description(self) -> str: ...  # a paragraph, for `opgen <name> --help`

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...


class Target(Command, Protocol[OptionsT]):
    """A generator of files: flags in, an options object, a model read, a `Generated` out."""

    def options(self, args: argparse.Namespace) -> OptionsT: ...

    def read(self, options: OptionsT) -> object: ...

    def emit(self, model: Any, options: OptionsT) -> Generated: ...


class Tool(Command, Protocol):
    """A command that generates nothing: `run` is the whole command, its exit status."""

    def run(self, args: argparse.Namespace, out: TextIO, err: TextIO) -> int: ...


def is_target(command: Target[Any] | Tool) -> TypeGuard[Target[Any]]:
    """Whether `command` is a target (it reads and emits) rather than a tool."""
    return hasattr(command, "read") and hasattr(command, "emit")


def generate(target: Target[OptionsT], options: OptionsT) -> Generated:
    """What `target` makes of `options`: its model read, then emitted (the Python API)."""
    return target.emit(target.read(options), options)


@frozen
class LazyTarget(Generic[OptionsT]):
    """A target whose reading and emitting are imported only when it runs, so that building
    its command line (and every other command's) does not pay for them."""

    name: str
    help: str
    description: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    options: Callable[[argparse.Namespace], OptionsT]
    reader: str  # `module:function`, the function being `read(options) -> model`
    emitter: str  # `module:function`, the function being `emit(model, options)`

    def read(self, options: OptionsT) -> object:
        return _imported(self.reader)(options)

    def emit(self, model: Any, options: OptionsT) -> Generated:
        emitted: Generated = _imported(self.emitter)(model, options)
        return emitted


@frozen
class ToolCommand:
    """A tool made of its module's functions (the module is imported when the command is
    listed or run, and imports what `run` needs only when it runs)."""

    name: str
    help: str
    description: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, TextIO, TextIO], int]


def _imported(reference: str) -> Callable[..., Any]:
    module, _, function = reference.partition(":")
    found: Callable[..., Any] = getattr(import_module(module), function)
    return found


def run_target(
    target: Target[OptionsT],
    options: OptionsT,
    out: TextIO,
    err: TextIO,
    *,
    retain: Callable[[object], object] | None = None,
) -> int:
    """Read, emit and deliver: the exit status (bad input raises `SpecError`).

    `retain`, if given, receives the model, which then outlives the run instead of being
    freed object by object when it returns (the command line exits the process right
    after, and the operating system reclaims it at once).
    """
    try:
        model = target.read(options)
        if retain is not None:
            retain(model)
        generated = target.emit(model, options)
    except UsageError as e:  # found only once the inputs are read: nothing is written
        err.writelines(f"opgen {target.name}: error: {problem}\n" for problem in e.problems)
        return 2
    deliver(generated, options.run, out, err)
    return 0


# A run of fewer files renders them in this process: a fork costs about 2 ms, more than
# splitting a few files' rendering saves (`opgen backend`'s 2 to 3 files and `opgen lazy`'s
# 5 to 6 only fill templates with texts made already). Every target whose rendering is
# worth spreading writes far more: `opgen autograd` 32 files, `opgen python` 21.
MIN_FILES_TO_FORK = 8


def rendering_jobs(generated: Generated, run: RunOptions) -> int:
    """How many processes render `generated`'s files: `run.jobs`, or one when the run
    cannot fork or has too few files to pay for a fork."""
    if run.jobs <= 1:
        return 1
    from opgen.forked import can_fork

    files = sum(len(output_set.paths()) for output_set in generated.outputs)
    return run.jobs if files >= MIN_FILES_TO_FORK and can_fork() else 1


def deliver(generated: Generated, run: RunOptions, out: TextIO, err: TextIO) -> None:
    """Print, list or write what a target generated, as the run's options say."""
    from opgen.diagnostics import write_diagnostics

    err.writelines(notice + "\n" for notice in generated.notices)
    write_diagnostics(generated.warnings, err)
    out.writelines(note + "\n" for note in generated.notes)
    if run.listing is not None:
        paths = (
            generated.sources
            if run.listing is Listing.SOURCES
            else [p for output_set in generated.outputs for p in output_set.paths()]
        )
        out.writelines(os.path.join(run.output_dir, p) + "\n" for p in paths)
        return
    from opgen.output import dependency_files
    from opgen.writer import write_files, write_if_changed

    if run.dry_run and generated.dry_run_renders:
        for output_set in generated.outputs:
            for path in output_set.paths():
                output_set.text(path)
    report = write_files(
        generated.outputs,
        dry_run=run.dry_run,
        make_roots=not run.dry_run,
        jobs=rendering_jobs(generated, run),
    )
    if run.output_dependencies and generated.dependency_lists:
        lists = dependency_files(run.output_dependencies, generated.dependency_lists)
        for listed, text in lists.items():
            write_if_changed(listed, text)
    if generated.summary is not None:
        out.write(generated.summary(report) + "\n")
