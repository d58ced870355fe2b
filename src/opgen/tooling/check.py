"""`opgen check`: load and validate a spec, and optionally the files read against it.

Besides the spec itself, it checks what other commands would read with it: PyTorch's
derivatives.yaml (`--derivatives`, as `opgen autograd` reads it), deprecated.yaml
(`--deprecated`), an out-of-tree backend's YAML (`--backend`), an ExecuTorch kernel
YAML (`--executorch`), a custom-op library spec (`--library`, with every check of
`opgen torch-library`) or an MLX extension spec (`--mlx`, with the derivatives file
`opgen mlx` would read: `--derivatives`, else the one beside it; `--no-derivatives`:
none). Each prints a one-line summary; errors are located diagnostics. A PyTorch spec
is read by the rules of the torch release `--torch-version` names, or of the tree it
lives in, as the drop-in commands choose it (`opgen.targets.torch_version`).
"""

from __future__ import annotations

import argparse
from typing import TextIO

from opgen.diagnostics import write_diagnostics
from opgen.releases import Release
from opgen.spec import Spec
from opgen.targets.contract import ToolCommand
from opgen.targets.torch_version import add_torch_version_argument
from opgen.tooling.spec_files import (
    add_spec_arguments,
    load_named_spec,
    named_release,
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
    parser.add_argument(
        "--library",
        action="store_true",
        help="read a custom-op library spec, as `opgen torch-library` does, with all its checks",
    )
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
        "--mlx",
        metavar="MLX_SPEC",
        help="check an MLX extension spec (either dialect) and its derivatives file, as "
        "`opgen mlx` reads them (--derivatives; default: derivatives.yaml beside the spec, "
        "if any)",
    )
    parser.add_argument(
        "--no-derivatives",
        action="store_true",
        help="with --mlx: " + mlx_command.NO_DERIVATIVES_HELP,
    )


def run_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.mlx is not None:
        return _check_mlx(args, out, err)
    if args.no_derivatives:
        err.write("opgen check: error: --no-derivatives is for an MLX spec (--mlx)\n")
        return 2
    if args.library:
        return _check_library(args, out, err)
    if args.aten_yaml_path is not None:
        if args.native_yaml not in (None, args.aten_yaml_path):
            err.write("opgen check: error: NATIVE_YAML and --aten-yaml-path name two specs\n")
            return 2
        args.native_yaml = args.aten_yaml_path
    release = named_release(args, "check", err)
    if release is None:
        return 2
    spec = load_named_spec(args, release)
    write_diagnostics(spec.warnings, err)
    derivatives = None if args.derivatives is None else _check_derivatives(spec, args)
    deprecated = None if args.deprecated is None else _check_deprecated(spec, args)
    backend = None if args.backend is None else _check_backend(spec, args)
    executorch = None if args.executorch is None else _check_executorch(spec, args, release, err)
    if (spec.warnings or (executorch and executorch[1])) and args.werror:
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
    if executorch is not None:
        out.write(f"{args.executorch}: ok: {executorch[0]}\n")
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
        f"{len(functions)} operators ({len(parsed.from_aten)} by 'op:', "
        f"{len(functions) - len(parsed.from_aten)} by 'func:'), {keys} kernel "
        + ("key" if keys == 1 else "keys")
    )
    return summary, len(parsed.warnings)


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
    from opgen.spec.mlx.derivatives import Derivatives
    from opgen.spec.mlx.reader import load_mlx_library

    if args.derivatives is not None and args.no_derivatives:
        err.write("opgen check: error: --derivatives and --no-derivatives contradict each other\n")
        return 2
    derivatives = None if args.no_derivatives else args.derivatives or Derivatives.BESIDE_SPEC
    library = load_mlx_library(args.mlx, derivatives=derivatives)
    args.retain(library)
    count = len(library.functions)
    bound = f", {count} bound function{'s' if count != 1 else ''}" if count else ""
    out.write(f"{args.mlx}: ok: {len(library.operators)} operators{bound}\n")
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
    out.write(f"{args.native_yaml}: ok: {library.summary()}\n")
    return 0


TOOL = ToolCommand(
    name="check",
    help="load and validate a spec",
    description="Load and validate a spec.",
    add_arguments=add_arguments,
    run=run_check,
)
