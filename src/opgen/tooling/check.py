"""`opgen check`: load and validate a spec, and optionally the files read against it.

The spec is `NATIVE_YAML`: PyTorch's spec language, or with `--library` a custom-op
library spec (every check of `opgen torch-library`, with its derivatives file) and with
`--mlx` an MLX extension spec (either dialect, with the derivatives file `opgen mlx`
would read: `--derivatives`, else the one beside it; `--no-derivatives`: none). A spec
read without the flag its dialect needs is told as such (`opgen.tooling.dialects`).
Besides a PyTorch spec, it checks what other commands would read with it: PyTorch's
derivatives.yaml (`--derivatives`, as `opgen autograd` reads it), deprecated.yaml
(`--deprecated`), an out-of-tree backend's YAML (`--backend`) and an ExecuTorch kernel
YAML (`--executorch`). Each prints a one-line summary; errors are located diagnostics.
A PyTorch spec is read by the rules of the torch release `--torch-version` names, or of
the tree it lives in, as the drop-in commands choose it (`opgen.targets.torch_version`).
"""

from __future__ import annotations

import argparse
from typing import TextIO

from opgen.counts import counted, warnings_counted
from opgen.diagnostics import write_diagnostics
from opgen.releases import Release
from opgen.spec import Spec
from opgen.targets.contract import ToolCommand
from opgen.targets.torch_version import add_torch_version_argument
from opgen.tooling.dialects import (
    Dialect,
    add_dialect_arguments,
    dialect_of,
    needs_spec,
    read_as,
)
from opgen.tooling.spec_files import (
    add_spec_arguments,
    load_named_spec,
    named_release,
    shown_name,
    spec_paths,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from opgen.targets.mlx import command as mlx_command
    from opgen.targets.torch_library import command as library_command

    add_spec_arguments(parser)
    add_torch_version_argument(parser)
    parser.add_argument(
        "--werror", action="store_true", help="treat warnings as errors (exit status 1)"
    )
    add_dialect_arguments(parser, "NATIVE_YAML")
    library_command.add_library_arguments(parser)
    parser.add_argument(
        "--deprecated",
        metavar="DEPRECATED_YAML",
        help="also check PyTorch's deprecated Python signatures (deprecated.yaml): each must "
        "call a function of the spec",
    )
    parser.add_argument(
        "--backend",
        metavar="BACKEND_YAML",
        help="also check an out-of-tree backend's YAML (as `opgen backend` and `opgen lazy` "
        "read it) against the spec",
    )
    parser.add_argument(
        "--executorch",
        metavar="ET_YAML",
        help="also check an ExecuTorch kernel YAML (`op:` and `func:` entries, `kernels:`) "
        "against the spec, as ExecuTorch's codegen reads it",
    )
    parser.add_argument(
        "--aten-yaml-path",
        metavar="NATIVE_YAML",
        help="the spec, under the name ExecuTorch's codegen gives it (NATIVE_YAML)",
    )
    parser.add_argument(
        "--no-derivatives",
        action="store_true",
        help="with --mlx: " + mlx_command.NO_DERIVATIVES_HELP,
    )


# The flags that check what is read against a PyTorch spec.
_PYTORCH_ONLY = ("deprecated", "backend", "executorch", "aten_yaml_path")


def run_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    dialect = dialect_of(args)
    problem = _usage_problem(args, dialect)
    if problem is not None:
        err.write(f"opgen check: error: {problem}\n")
        return 2
    if dialect == "mlx":
        return _check_mlx(args, out)
    if dialect == "library":
        return _check_library(args, out, err)
    if args.aten_yaml_path is not None:
        if args.native_yaml not in (None, args.aten_yaml_path):
            err.write("opgen check: error: NATIVE_YAML and --aten-yaml-path name two specs\n")
            return 2
        args.native_yaml = args.aten_yaml_path
    release = named_release(args, "check", err)
    if release is None:
        return 2
    spec = load_named_spec(args, "check", release)
    write_diagnostics(spec.warnings, err)
    derivatives = None if args.derivatives is None else _check_derivatives(spec, args)
    deprecated = None if args.deprecated is None else _check_deprecated(spec, args)
    backend = None if args.backend is None else _check_backend(spec, args)
    executorch = None if args.executorch is None else _check_executorch(spec, args, release, err)
    if (spec.warnings or (executorch and executorch[1])) and args.werror:
        return 1
    derived = len(spec.functions) - spec.entry_count
    name = shown_name(args, spec_paths(args.native_yaml, args.tags))
    out.write(
        f"{name}: ok: {counted(spec.entry_count, 'entry')}, "
        f"{counted(len(spec.functions), 'function')} ({derived} derived), "
        f"{counted(len(spec.groups), 'group')}, {counted(len(spec.view_groups), 'view group')}"
        f"{warnings_counted(len(spec.warnings))}\n"
    )
    if derivatives is not None:
        out.write(f"{args.derivatives}: ok: {derivatives}\n")
    if deprecated is not None:
        out.write(f"{args.deprecated}: ok: {deprecated}\n")
    if backend is not None:
        out.write(f"{args.backend}: ok: {backend}\n")
    if executorch is not None:
        out.write(f"{args.executorch}: ok: {executorch[0]}{warnings_counted(executorch[1])}\n")
    return 0


def _check_executorch(
    spec: Spec, args: argparse.Namespace, release: Release, err: TextIO
) -> tuple[str, int]:
    """Read an ExecuTorch kernel YAML against the spec; a summary and its warnings' count."""
    from opgen.spec.executorch import ETReadOptions, load_executorch_yaml

    parsed = load_executorch_yaml(args.executorch, spec, ETReadOptions(release=release))
    args.retain(parsed)
    write_diagnostics(parsed.warnings, err)
    functions = parsed.native_functions
    keys = sum(len(kernels) for kernels in parsed.kernel_index.index.values())
    summary = (
        f"{counted(len(functions), 'operator')} ({len(parsed.from_aten)} by 'op:', "
        f"{len(functions) - len(parsed.from_aten)} by 'func:'), {counted(keys, 'kernel key')}"
    )
    return summary, len(parsed.warnings)


def _check_backend(spec: Spec, args: argparse.Namespace) -> str:
    """Read a backend YAML against the spec; a summary."""
    from opgen.spec.external_backend import load_external_backend

    backend = load_external_backend(args.backend, spec)
    parts = [
        f"{counted(len(index.index), 'kernel')} for {key}" for key, index in backend.indices.items()
    ] or [f"no kernels for {backend.backend}"]
    lazy = len(backend.full_codegen) + len(backend.ir_gen) + len(backend.non_native)
    if lazy:
        parts.append(counted(lazy, "lazy IR node"))
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
    return (
        f"{counted(len(deprecated), 'deprecated signature')}, calling "
        f"{counted(len(called), 'function')}"
    )


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
    keys = sorted(infos.used_dispatch_keys)
    return (
        f"{counted(len(infos.infos), 'operator')} with formulas "
        f"({counted(nodes, 'backward node')}; dispatch {'key' if len(keys) == 1 else 'keys'} "
        f"{', '.join(keys)}), used by {counted(users, 'function')}"
    )


def _usage_problem(args: argparse.Namespace, dialect: Dialect) -> str | None:
    """What is wrong with the flags, before anything is read (exit status 2)."""
    if dialect != "pytorch" and args.native_yaml is None:
        return needs_spec(dialect)
    if args.no_derivatives and dialect != "mlx":
        return "--no-derivatives is for an MLX spec (--mlx)"
    if args.derivatives is not None and args.no_derivatives:
        return "--derivatives and --no-derivatives contradict each other"
    if dialect != "pytorch":
        for name in _PYTORCH_ONLY:
            if getattr(args, name) is not None:
                flag = "--" + name.replace("_", "-")
                return f"{flag} is checked against a PyTorch spec, not with --{dialect}"
    if dialect != "library":
        given = "--python-path" if args.python_path else "--package" if args.package else None
        if given is not None:
            return f"{given} is for a library spec (--library)"
    return None


def _check_mlx(args: argparse.Namespace, out: TextIO) -> int:
    """Read an MLX spec with all its checks; its errors propagate to `main`."""
    from opgen.spec.mlx.derivatives import Derivatives
    from opgen.spec.mlx.model import bound_counts
    from opgen.spec.mlx.reader import load_mlx_library

    path = args.native_yaml
    derivatives = None if args.no_derivatives else args.derivatives or Derivatives.BESIDE_SPEC
    library = read_as("mlx", path, "check", lambda: load_mlx_library(path, derivatives=derivatives))
    args.retain(library)
    out.write(f"{path}: ok: {counted(len(library.operators), 'operator')}")
    out.write(f"{bound_counts(library)}\n")
    return 0


def _check_library(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from opgen.targets.torch_library import command as library_command

    path = args.native_yaml
    library = read_as("library", path, "check", lambda: library_command.load(args))
    write_diagnostics(library.warnings, err)
    if library.warnings and args.werror:
        return 1
    out.write(f"{path}: ok: {library.summary()}{warnings_counted(len(library.warnings))}\n")
    return 0


TOOL = ToolCommand(
    name="check",
    help="load and validate a spec",
    description="Load and validate a spec.",
    add_arguments=add_arguments,
    run=run_check,
)
