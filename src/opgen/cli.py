"""The `opgen` command line: a thin front end over the library.

`main(argv)` returns the exit status: 0 success, 1 bad input (diagnostics on
stderr), 2 bad usage. It never lets a traceback reach the user for bad input.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import NoReturn, TextIO

from opgen import __version__
from opgen.diagnostics import Diagnostic, SpecError, render
from opgen.frozen import frozen
from opgen.jobs import add_jobs_argument, default_jobs
from opgen.spec import Spec, load_spec
from opgen.targets.aten import command as aten_command
from opgen.targets.autograd import annotated_command
from opgen.targets.autograd import command as autograd_command
from opgen.targets.backend import command as backend_command
from opgen.targets.lazy import command as lazy_command
from opgen.targets.mlx import command as mlx_command
from opgen.targets.pyi import command as pyi_command
from opgen.targets.python import command as python_command
from opgen.targets.torch_library import command as library_command
from opgen.tooling.coverage import command as coverage_command
from opgen.tooling.diff import command as diff_command


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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="opgen",
        description="Generate operator code from PyTorch's operator spec language.",
    )
    parser.add_argument("--version", action="version", version=f"opgen {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

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

    aten = commands.add_parser(
        "aten",
        help="generate ATen's files, as `python -m torchgen.gen` does",
        description="Generate ATen's files from --source-path, byte for byte as "
        "`python -m torchgen.gen` does, with the same flags.",
    )
    aten_command.add_arguments(aten)
    aten.set_defaults(run=aten_command.run_aten)

    autograd = commands.add_parser(
        "autograd",
        help="generate the autograd files, as torchgen's gen_autograd does",
        description="Generate the autograd files (Functions, VariableType, ADInplaceOrViewType, "
        "TraceType, ViewFuncs, variable_factories) from derivatives.yaml and the spec, byte for "
        "byte as `python -m torchgen.packaged.autograd.gen_autograd` does.",
    )
    autograd_command.add_arguments(autograd)
    autograd.set_defaults(run=autograd_command.run_autograd)

    annotated = commands.add_parser(
        "annotated-fn-args",
        help="generate annotated_fn_args.py, as torchgen's gen_annotated_fn_args does",
        description="Generate annotated_fn_args.py (the arguments of every Python binding, for "
        "PyTorch's __torch_function__ tests), byte for byte as "
        "`python -m torchgen.packaged.autograd.gen_annotated_fn_args` does.",
    )
    annotated_command.add_arguments(annotated)
    annotated.set_defaults(run=annotated_command.run_annotated_fn_args)

    python = commands.add_parser(
        "python",
        help="generate the Python bindings, as torchgen's gen_autograd_python does",
        description="Generate the Python bindings (python_functions, python_torch_functions, "
        "python_variable_methods, python_<module>_functions, python_return_types, "
        "python_enum_tag) from the spec, derivatives.yaml and deprecated.yaml, byte for byte "
        "as torchgen's gen_autograd_python does.",
    )
    python_command.add_arguments(python)
    python.set_defaults(run=python_command.run_python)

    pyi = commands.add_parser(
        "pyi",
        help="generate the .pyi stubs of torch's generated bindings, as tools/pyi/gen_pyi.py does",
        description=pyi_command.DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    pyi_command.add_arguments(pyi)
    pyi.set_defaults(run=pyi_command.run_pyi)

    backend = commands.add_parser(
        "backend",
        help="generate an out-of-tree backend's registrations, as gen_backend_stubs does",
        description="Generate an out-of-tree backend's kernel class header and dispatcher "
        "registrations from its backend YAML, byte for byte as "
        "`python -m torchgen.gen_backend_stubs` does, with the same flags.",
    )
    backend_command.add_arguments(backend)
    backend.set_defaults(run=backend_command.run_backend)

    lazy = commands.add_parser(
        "lazy",
        help="generate a lazy-tensor backend's IR and kernels, as gen_lazy_tensor does",
        description="Generate a lazy-tensor backend's IR node classes, kernels, kernel class "
        "header and registrations from its backend YAML, byte for byte as torchgen's "
        "gen_lazy_tensor does, with the same flags (and one per run_gen_lazy_tensor argument).",
    )
    lazy_command.add_arguments(lazy)
    lazy.set_defaults(run=lazy_command.run_lazy)

    mlx = commands.add_parser(
        "mlx",
        help="generate an MLX extension (nanobind bindings with gradients) from an MLX spec",
        description="Generate an MLX extension module from an MLX operator spec: the C++ "
        "operators (custom_vjp from gradient formulas, Primitive classes for kernels), "
        "nanobind bindings, a type stub and a CMake function that builds them.",
    )
    mlx_command.add_arguments(mlx)
    mlx.set_defaults(run=mlx_command.run_mlx)

    diff = commands.add_parser(
        "diff",
        help="compatibility breaks between two specs, by PyTorch's rules",
        description="Compare two specs operator by operator: every change, located in both "
        "files, as backward-incompatible, forward-incompatible (as PyTorch's schema checks "
        "decide) or informational. Exit status 1 when a break is not allowed.",
    )
    diff_command.add_arguments(diff)
    diff.set_defaults(run=diff_command.run_diff)

    coverage = commands.add_parser(
        "coverage",
        help="how much of another spec's operators a spec or backend implements",
        description="How much of OTHER's operators SPEC implements, grouped by tag and by "
        "tier, with the missing operators. SPEC and OTHER are each a spec "
        "(native_functions.yaml), a backend YAML or a text file of operator names.",
    )
    coverage_command.add_arguments(coverage)
    coverage.set_defaults(run=coverage_command.run_coverage)

    library = commands.add_parser(
        "torch-library",
        help="generate a PyTorch custom-op library (C++ and Python) from a library spec",
        description="Generate a PyTorch custom-op library from a library spec: schemas and "
        "registrations, kernel declarations, a C++ API, Autograd kernels from gradient "
        "formulas, and a typed Python package.",
    )
    library_command.add_arguments(library)
    library.set_defaults(run=run_torch_library)
    return parser


def _report(diagnostics: Iterable[Diagnostic], err: TextIO) -> None:
    sources: dict[str, list[str]] = {}
    for d in diagnostics:
        if d.location is not None and d.location.file not in sources:
            sources[d.location.file] = _read_for_display(d.location.file).splitlines()
        err.write(render(d, sources) + "\n")


def _read_for_display(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def _load(args: argparse.Namespace) -> Spec:
    paths = spec_paths(args.native_yaml, args.tags)
    spec = load_spec(paths.native, paths.tags)
    args.retain(spec)
    return spec


def run_torch_library(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    return library_command.run(args, out, err, _report)


def run_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.mlx is not None:
        return _check_mlx(args, out, err)
    if args.library:
        return _check_library(args, out, err)
    spec = _load(args)
    _report(spec.warnings, err)
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
    from opgen.api.python_bindings import should_generate_py_binding
    from opgen.api.python_overloads import load_deprecated, load_signatures
    from opgen.api.signatures import SignatureSet

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
    from opgen.api.derivatives import load_derivative_infos
    from opgen.api.derivatives_match import match_differentiability_info

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
    library = library_command.load(args)
    _report(library.warnings, err)
    if library.warnings and args.werror:
        return 1
    out.write(f"{args.native_yaml}: ok: {library_command.summary(library)}\n")
    return 0


def run_dump(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from opgen.dump import dump_chunks  # json is not needed by the other commands

    spec = _load(args)
    _report(spec.warnings, err)
    workers = default_jobs() if args.jobs is None else args.jobs
    chunks = dump_chunks(spec, signatures=args.signatures, workers=workers, retain=args.retain)
    for text in chunks:
        out.write(text)
    return 0


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
    parser = build_parser()
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
        _report(e.diagnostics, err)
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
