"""The one shape every target has, and what the command line does with its result.

A target is an object with a `name`, a one-line `help` and a `description`, and three
steps that the command line runs in order:

    add_arguments(parser)       its flags, spelled as the tool it replaces spells them
    options(args) -> Options    the flags as a frozen options object; a usage problem
                                (flags that contradict each other) raises `UsageError`
    generate(options) -> Generated
                                reads its inputs and fills `OutputSet`s; never writes a
                                file; bad input raises `SpecError`

Whatever a target's own options hold, `options.run` is a `RunOptions`: the settings
every run shares (where to write, in how many processes, a dry run, the dependency
list, a listing instead of a write, the torch release a drop-in generates for).
`deliver` then does what they say with the `Generated` result, the same way for
every target: prints the target's notes and
warnings, writes the sets through `opgen.writer.write_files` (atomic, only changed
files), writes the dependency lists, and prints the target's summary.

`generate` is the Python API as well: `generate(options)` of a target's `generate`
module builds the same `Generated` without a command line. opgen's targets are
`LazyTarget`s, which import that module only when they run.

Targets are registered in `opgen.targets.registry`; other packages add theirs through
the `opgen.targets` entry-point group.
"""

from __future__ import annotations

import argparse
import enum
import os
from collections.abc import Callable, Sequence
from importlib import import_module
from typing import TYPE_CHECKING, Any, Generic, Protocol, TextIO, TypeVar

from opgen.frozen import frozen
from opgen.releases import NEWEST, Release

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
    """What every run is told, whichever the target."""

    output_dir: str  # where the files go (a target may write other roots beside it)
    jobs: int = 1  # processes rendering the files (`opgen.forked`); never changes output
    dry_run: bool = False  # generate and check, write no generated file
    output_dependencies: str | None = None  # also write the CMake lists of generated files
    listing: Listing | None = None  # print these paths instead of writing anything
    # The torch release a drop-in generates for (`opgen.releases`), and what to say on
    # stderr about how it was chosen (`opgen.targets.torch_version`).
    release: Release = NEWEST
    release_notice: str | None = None


@frozen(eq=False)
class Generated:
    """What a run produced: the files, and what the command line says about them."""

    outputs: Sequence[OutputSet]
    # (file-name prefix, set): one CMake list per set with `--output-dependencies`.
    dependency_lists: Sequence[tuple[str, OutputSet]] = ()
    notes: Sequence[str] = ()  # printed on stdout before anything is written
    warnings: Sequence[Diagnostic] = ()  # printed on stderr, located
    sources: Sequence[str] = ()  # the C++ sources to compile, relative to the output dir
    # A dry run renders every file (so bad input fails it too) instead of only listing.
    dry_run_renders: bool = False
    # Rendering only fills templates with texts made already: the files are rendered
    # in this process, as a fork for them would cost more (about 2 ms) than it saves.
    render_in_one_process: bool = False
    # The line printed after writing, from what was written.
    summary: Callable[[WriteReport], str] | None = None
    # The model the files were rendered from; kept alive until the process exits.
    model: object = None


class TargetOptions(Protocol):
    @property
    def run(self) -> RunOptions: ...


OptionsT = TypeVar("OptionsT", bound=TargetOptions)
ModelT = TypeVar("ModelT")


class Target(Protocol[OptionsT]):
    """A generator of files: flags in, an options object, a model read, a `Generated` out."""

    @property
    def name(self) -> str: ...  # the subcommand: `opgen <name>`

    @property
    def help(self) -> str: ...  # one line, for `opgen --help`

    @property
    def description(self) -> str: ...  # a paragraph, for `opgen <name> --help`

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def options(self, args: argparse.Namespace) -> OptionsT: ...

    def read(self, options: OptionsT) -> object: ...

    def emit(self, model: Any, options: OptionsT) -> Generated: ...


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
    reader: str = ""  # `module:function`, the function being `read(options) -> model`
    emitter: str = ""  # `module:function`, the function being `emit(model, options)`
    generator: str = ""  # (while targets move to read/emit) `generate(options) -> Generated`

    def read(self, options: OptionsT) -> object:
        if not self.reader:
            return _imported(self.generator)(options)
        return _imported(self.reader)(options)

    def emit(self, model: Any, options: OptionsT) -> Generated:
        if not self.emitter:
            generated: Generated = model
            return generated
        emitted: Generated = _imported(self.emitter)(model, options)
        return emitted


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
    release_notice = getattr(options.run, "release_notice", None)
    if release_notice is not None:
        err.write(release_notice + "\n")
    try:
        model = target.read(options)
        if retain is not None:
            retain(model)
        generated = target.emit(model, options)
    except UsageError as e:  # found only once the inputs are read: nothing is written
        err.writelines(f"opgen {target.name}: error: {problem}\n" for problem in e.problems)
        return 2
    if retain is not None and generated.model is not None:
        retain(generated.model)
    deliver(generated, options.run, out, err)
    return 0


def deliver(generated: Generated, run: RunOptions, out: TextIO, err: TextIO) -> None:
    """Print, list or write what a target generated, as the run's options say."""
    from opgen.diagnostics import write_diagnostics

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
    from opgen.forked import can_fork
    from opgen.output import dependency_files
    from opgen.writer import write_files, write_if_changed

    if run.dry_run and generated.dry_run_renders:
        for output_set in generated.outputs:
            for path in output_set.paths():
                output_set.text(path)
    jobs = run.jobs if can_fork() and not generated.render_in_one_process else 1
    report = write_files(
        generated.outputs, dry_run=run.dry_run, make_roots=not run.dry_run, jobs=jobs
    )
    if run.output_dependencies and generated.dependency_lists:
        lists = dependency_files(run.output_dependencies, generated.dependency_lists)
        for listed, text in lists.items():
            write_if_changed(listed, text)
    if generated.summary is not None:
        out.write(generated.summary(report) + "\n")
