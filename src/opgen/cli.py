"""The `opgen` command line: a thin front end over the library.

`main(argv)` returns the exit status: 0 success, 1 bad input (diagnostics on
stderr), 2 bad usage. It never lets a traceback reach the user for bad input.
Each command but check and dump lives in a module of its own (`_COMMANDS`),
imported only when that command runs or its help is asked for: every run
pays for its own command alone.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import NoReturn, TextIO

from opgen import __version__
from opgen.diagnostics import SpecError, write_diagnostics
from opgen.frozen import frozen
from opgen.jobs import add_jobs_argument, default_jobs
from opgen.spec import Spec, load_spec


@frozen
class SpecPaths:
    native: str
    tags: str | None


def bundled_example() -> SpecPaths:
    """The example spec shipped with opgen."""
    # Package data, installed as plain files. (`os.path`: importing pathlib would
    # cost every command a few milliseconds.)
    root = os.path.join(os.path.dirname(__file__), "examples")
    return SpecPaths(os.path.join(root, "native_functions.yaml"), os.path.join(root, "tags.yaml"))


def spec_paths(native: str | None, tags: str | None) -> SpecPaths:
    """The spec to read: the bundled example if none is named; tags.yaml beside it by default."""
    if native is None:
        example = bundled_example()
        return SpecPaths(example.native, tags or example.tags)
    if tags is None:
        beside = os.path.join(os.path.dirname(native), "tags.yaml")
        tags = beside if os.path.isfile(beside) else None
    return SpecPaths(native, tags)


def _add_spec_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "native_yaml",
        nargs="?",
        metavar="NATIVE_YAML",
        help="the operator spec (native_functions.yaml); default: the bundled example",
    )
    parser.add_argument(
        "--tags",
        metavar="TAGS_YAML",
        help="the tags file; default: tags.yaml beside NATIVE_YAML, if there is one",
    )


@frozen
class _Command:
    """A command whose module is imported only when it runs (or `opgen --help` lists it)."""

    name: str
    help: str
    description: str | None  # None: the module's DESCRIPTION, shown as written
    module: str  # has add_arguments(parser) and the run function
    run: str


# In the order `opgen --help` lists them, after check and dump.
_COMMANDS = (
    _Command(
        "aten",
        "generate ATen's files, as `python -m torchgen.gen` does",
        "Generate ATen's files from --source-path, byte for byte as `python -m torchgen.gen` "
        "does, with the same flags.",
        "opgen.targets.aten.command",
        "run_aten",
    ),
    _Command(
        "autograd",
        "generate the autograd files, as torchgen's gen_autograd does",
        "Generate the autograd files (Functions, VariableType, ADInplaceOrViewType, TraceType, "
        "ViewFuncs, variable_factories) from derivatives.yaml and the spec, byte for byte as "
        "`python -m torchgen.packaged.autograd.gen_autograd` does.",
        "opgen.targets.autograd.command",
        "run_autograd",
    ),
    _Command(
        "annotated-fn-args",
        "generate annotated_fn_args.py, as torchgen's gen_annotated_fn_args does",
        "Generate annotated_fn_args.py (the arguments of every Python binding, for PyTorch's "
        "__torch_function__ tests), byte for byte as "
        "`python -m torchgen.packaged.autograd.gen_annotated_fn_args` does.",
        "opgen.targets.autograd.annotated_command",
        "run_annotated_fn_args",
    ),
    _Command(
        "python",
        "generate the Python bindings, as torchgen's gen_autograd_python does",
        "Generate the Python bindings (python_functions, python_torch_functions, "
        "python_variable_methods, python_<module>_functions, python_return_types, "
        "python_enum_tag) from the spec, derivatives.yaml and deprecated.yaml, byte for byte "
        "as torchgen's gen_autograd_python does.",
        "opgen.targets.python.command",
        "run_python",
    ),
    _Command(
        "pyi",
        "generate the .pyi stubs of torch's generated bindings, as tools/pyi/gen_pyi.py does",
        None,
        "opgen.targets.pyi.command",
        "run_pyi",
    ),
    _Command(
        "backend",
        "generate an out-of-tree backend's registrations, as gen_backend_stubs does",
        "Generate an out-of-tree backend's kernel class header and dispatcher registrations "
        "from its backend YAML, byte for byte as `python -m torchgen.gen_backend_stubs` does, "
        "with the same flags.",
        "opgen.targets.backend.command",
        "run_backend",
    ),
    _Command(
        "lazy",
        "generate a lazy-tensor backend's IR and kernels, as gen_lazy_tensor does",
        "Generate a lazy-tensor backend's IR node classes, kernels, kernel class header and "
        "registrations from its backend YAML, byte for byte as torchgen's gen_lazy_tensor "
        "does, with the same flags (and one per run_gen_lazy_tensor argument).",
        "opgen.targets.lazy.command",
        "run_lazy",
    ),
    _Command(
        "mlx",
        "generate an MLX extension (nanobind bindings with gradients) from an MLX spec",
        "Generate an MLX extension module from an MLX operator spec: the C++ operators "
        "(custom_vjp from gradient formulas, Primitive classes for kernels), nanobind "
        "bindings, a type stub and a CMake function that builds them.",
        "opgen.targets.mlx.command",
        "run_mlx",
    ),
    _Command(
        "diff",
        "compatibility breaks between two specs, by PyTorch's rules",
        "Compare two specs operator by operator: every change, located in both files, as "
        "backward-incompatible, forward-incompatible (as PyTorch's schema checks decide) or "
        "informational. Exit status 1 when a break is not allowed.",
        "opgen.tooling.diff.command",
        "run_diff",
    ),
    _Command(
        "coverage",
        "how much of another spec's operators a spec or backend implements",
        "How much of OTHER's operators SPEC implements, grouped by tag and by tier, with the "
        "missing operators. SPEC and OTHER are each a spec (native_functions.yaml), a backend "
        "YAML or a text file of operator names.",
        "opgen.tooling.coverage.command",
        "run_coverage",
    ),
    _Command(
        "torch-library",
        "generate a PyTorch custom-op library (C++ and Python) from a library spec",
        "Generate a PyTorch custom-op library from a library spec: schemas and registrations, "
        "kernel declarations, a C++ API, Autograd kernels from gradient formulas, and a typed "
        "Python package.",
        "opgen.targets.torch_library.command",
        "run",
    ),
)


_COMMAND_NAMES = frozenset(["check", "dump", *(command.name for command in _COMMANDS)])


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser; with `only`, a known command, just that command, so that a run
    imports no other command's module and builds no other parser (the others are
    listed only when `only` names none of them, for the usage error)."""
    parser = argparse.ArgumentParser(
        prog="opgen",
        description="Generate operator code from PyTorch's operator spec language.",
    )
    parser.add_argument("--version", action="version", version=f"opgen {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    # A known command's arguments parse alone: its help and usage errors never list
    # the other commands, which would cost argparse a few milliseconds per run.
    known = only in _COMMAND_NAMES
    if only in (None, "check", "dump"):
        _add_check_and_dump(commands)
    elif not known:
        commands.add_parser("check", help="load and validate a spec")
        commands.add_parser("dump", help="print the model as JSON Lines")
    for command in _COMMANDS:
        if only not in (None, command.name):
            if not known:
                commands.add_parser(command.name, help=command.help)
            continue
        module = importlib.import_module(command.module)
        sub = commands.add_parser(
            command.name,
            help=command.help,
            description=command.description or module.DESCRIPTION,
            formatter_class=(
                argparse.HelpFormatter
                if command.description
                else argparse.RawDescriptionHelpFormatter
            ),
        )
        module.add_arguments(sub)
        sub.set_defaults(run=getattr(module, command.run))
    return parser


def _add_check_and_dump(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from opgen.targets.torch_library import command as library_command

    check = commands.add_parser(
        "check", help="load and validate a spec", description="Load and validate a spec."
    )
    _add_spec_arguments(check)
    check.add_argument(
        "--werror", action="store_true", help="treat warnings as errors (exit status 1)"
    )
    check.add_argument(
        "--library",
        action="store_true",
        help="read a custom-op library spec, as `opgen torch-library` does, with all its checks",
    )
    library_command.add_library_arguments(check)
    check.add_argument(
        "--deprecated",
        metavar="DEPRECATED_YAML",
        help="also check PyTorch's deprecated Python signatures (deprecated.yaml): each must "
        "call a function of the spec",
    )
    check.add_argument(
        "--backend",
        metavar="BACKEND_YAML",
        help="also check an out-of-tree backend's YAML (as `opgen backend` and `opgen lazy` "
        "read it) against the spec",
    )
    check.add_argument(
        "--mlx",
        metavar="MLX_SPEC",
        help="check an MLX extension spec (either dialect) and its derivatives.yaml, as "
        "`opgen mlx` reads them",
    )
    check.set_defaults(run=run_check)

    dump = commands.add_parser(
        "dump",
        help="print the model as JSON Lines",
        description="Print one JSON object per native function, derived ones included.",
    )
    _add_spec_arguments(dump)
    dump.add_argument(
        "--signatures",
        action="store_true",
        help="add each function's declarations: cpp, cpp_method, dispatcher, native, "
        "python and python_pyi",
    )
    add_jobs_argument(dump, "the records")
    dump.set_defaults(run=run_dump)


def _load(args: argparse.Namespace) -> Spec:
    paths = spec_paths(args.native_yaml, args.tags)
    spec = load_spec(paths.native, paths.tags)
    args.retain(spec)
    return spec


def run_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.mlx is not None:
        return _check_mlx(args, out, err)
    if args.library:
        return _check_library(args, out, err)
    spec = _load(args)
    write_diagnostics(spec.warnings, err)
    derivatives = None if args.derivatives is None else _check_derivatives(spec, args)
    deprecated = None if args.deprecated is None else _check_deprecated(spec, args)
    backend = None if args.backend is None else _check_backend(spec, args)
    if spec.warnings and args.werror:
        return 1
    derived = len(spec.functions) - spec.entry_count
    paths = spec_paths(args.native_yaml, args.tags)
    out.write(
        f"{paths.native}: ok: {spec.entry_count} entries, {len(spec.functions)} functions "
        f"({derived} derived), {len(spec.groups)} groups, {len(spec.view_groups)} view groups"
        + (f", {len(spec.warnings)} warnings" if spec.warnings else "")
        + "\n"
    )
    if derivatives is not None:
        out.write(f"{args.derivatives}: ok: {derivatives}\n")
    if deprecated is not None:
        out.write(f"{args.deprecated}: ok: {deprecated}\n")
    if backend is not None:
        out.write(f"{args.backend}: ok: {backend}\n")
    return 0


def _check_backend(spec: Spec, args: argparse.Namespace) -> str:
    """Read a backend YAML against the spec; a summary."""
    from opgen.spec.external_backend import load_external_backend

    backend = load_external_backend(args.backend, spec)
    parts = [f"{len(index.index)} kernels for {key}" for key, index in backend.indices.items()] or [
        f"no kernels for {backend.backend}"
    ]
    lazy = len(backend.full_codegen) + len(backend.ir_gen) + len(backend.non_native)
    if lazy:
        parts.append(f"{lazy} lazy IR nodes")
    return ", ".join(parts)


def _check_deprecated(spec: Spec, args: argparse.Namespace) -> str:
    """Bind each deprecated Python signature to the functions it calls; a summary."""
    from opgen.api.signatures import SignatureSet
    from opgen.python_bindings.bound import should_generate_py_binding
    from opgen.python_bindings.overloads import load_deprecated, load_signatures

    deprecated = load_deprecated(args.deprecated)
    functions = [f for f in spec.functions if should_generate_py_binding(f)]
    # Methods bind alike: matching reads only the names and the functions' schemas.
    pairs = load_signatures(functions, deprecated, SignatureSet(), method=False)
    called = {id(pair.function) for pair in pairs[len(functions) :]}
    args.retain(pairs)
    return f"{len(deprecated)} deprecated signatures, calling {len(called)} functions"


def _check_derivatives(spec: Spec, args: argparse.Namespace) -> str:
    """Load PyTorch's derivatives.yaml dialect and match every function; a summary."""
    from opgen.api import cpp
    from opgen.autograd.load_derivatives import load_derivative_infos
    from opgen.autograd.match import match_differentiability_info

    infos = load_derivative_infos(spec, args.derivatives)
    # The order `opgen autograd` matches them in (foreach infos are derived on the way).
    functions = sorted(spec.functions, key=lambda f: cpp.name(f.func))
    matched = match_differentiability_info(functions, infos)
    args.retain((infos, matched))
    per_key = [info for by_key in infos.infos.values() for info in by_key.values()]
    nodes = sum(info.op is not None for info in per_key)
    users = sum(fn.info is not None for fn in matched)
    keys = ", ".join(sorted(infos.used_dispatch_keys))
    return (
        f"{len(infos.infos)} operators with formulas ({nodes} backward nodes; dispatch keys "
        f"{keys}), used by {users} functions"
    )


def _check_mlx(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Read an MLX spec with all its checks; its errors propagate to `main`."""
    from opgen.spec.mlx.reader import load_mlx_library

    library = load_mlx_library(args.mlx)
    args.retain(library)
    out.write(f"{args.mlx}: ok: {len(library.operators)} operators\n")
    return 0


def _check_library(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.native_yaml is None:
        err.write("opgen check: error: --library needs the library spec\n")
        return 2
    from opgen.targets.torch_library import command as library_command

    library = library_command.load(args)
    write_diagnostics(library.warnings, err)
    if library.warnings and args.werror:
        return 1
    out.write(f"{args.native_yaml}: ok: {library_command.summary(library)}\n")
    return 0


def run_dump(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from opgen.dump import dump_chunks  # json is not needed by the other commands

    spec = _load(args)
    write_diagnostics(spec.warnings, err)
    workers = default_jobs() if args.jobs is None else args.jobs
    chunks = dump_chunks(spec, signatures=args.signatures, workers=workers, retain=args.retain)
    for text in chunks:
        out.write(text)
    return 0


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
    parser = build_parser(_command_of(sys.argv[1:] if argv is None else argv))
    try:
        args = parser.parse_args(argv)
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
