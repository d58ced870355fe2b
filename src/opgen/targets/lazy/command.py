"""`opgen lazy`: the command line of `python -m torchgen.gen_lazy_tensor`, and the rest.

Upstream's command line has `-s`, `-o`, `--dry-run`, `--impl-path`,
`--gen-ts-lowerings`, `--node-base(-hdr)`, `--shape-inference-hdr`,
`--tensor-class(-hdr)` and `--backend-name`; the other keyword arguments of
its `run_gen_lazy_tensor` (what torch_xla and PyTorch's own build pass) are
flags here too, one per `LazyOptions` field, named after it. The spec and
templates come from `--source-path` or the installed torchgen's packaged
ATen, as for `opgen backend`.

The shape-inference header (`--shape-inference-hdr`) is both the include the
generated kernels use and the file checked, relative to the working
directory, as upstream does: each generated kernel that cannot take its
shapes from a meta kernel calls a `compute_shape_<kernel>` function, which
the header must declare on a line of its own.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import TextIO

from opgen.diagnostics import SpecError
from opgen.spec.groups import NativeFunctionsGroup
from opgen.spec.native import NativeFunction
from opgen.targets.backend.command import add_common_arguments, load_inputs, output_set
from opgen.targets.lazy.options import LazyOptions

GENERATOR = "torchgen/gen_lazy_tensor.py"

# Upstream's own flags, with its help; the other LazyOptions fields get a generic one.
_UPSTREAM_HELP = {
    "gen_ts_lowerings": "generate TorchScript lowerings (Lower methods) in the IR nodes",
    "node_base": "the IR nodes' base class",
    "node_base_hdr": "the header of the IR nodes' base class",
    "shape_inference_hdr": "the header declaring the compute_shape_* functions (checked)",
    "tensor_class": "the backend's lazy tensor class",
    "tensor_class_hdr": "the header of the lazy tensor class",
    "backend_name": "the backend's name, in the registering function's name",
}
_DEFAULTS = LazyOptions()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_common_arguments(parser)
    for field in dataclasses.fields(LazyOptions):
        name = field.name
        default = getattr(_DEFAULTS, name)
        help_text = _UPSTREAM_HELP.get(name, f"run_gen_lazy_tensor's {name}")
        if default is True:
            parser.add_argument(
                f"--no-{name.replace('_', '-')}",
                dest=name,
                action="store_false",
                help=f"{help_text}: off (default: on)",
            )
        elif default is False:
            flags = (f"--{name.replace('_', '-')}", f"--{name}")
            parser.add_argument(*flags, dest=name, action="store_true", help=help_text)
        else:
            flags = (f"--{name.replace('_', '-')}", f"--{name}")
            parser.add_argument(
                *flags,
                dest=name,
                default=default,
                metavar="TEXT",
                help=f"{help_text} (default: %(default)s)",
            )


def options_from(args: argparse.Namespace) -> LazyOptions:
    return LazyOptions(**{f.name: getattr(args, f.name) for f in dataclasses.fields(LazyOptions)})


def run_lazy(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from opgen.api.signatures import SignatureSet
    from opgen.output import write_files
    from opgen.targets.backend.files import (
        BackendRun,
        RegistrationStyle,
        add_native_functions_header,
        add_registrations,
    )
    from opgen.targets.backend.kernel_check import check_kernel_definitions
    from opgen.targets.lazy.checks import check_properties, check_shape_inference_header
    from opgen.targets.lazy.files import add_lazy_files, lazy_texts

    options = options_from(args)
    aten, spec, backend = load_inputs(args)
    args.retain(spec)
    key = backend.backend_key
    if key is None:
        raise SpecError(
            "a lazy backend must list kernels under 'supported:' or 'full_codegen:'",
            backend.location,
        )
    check_properties(backend)
    # Upstream's lazy generator sorts the grouped spec by functional name, and ignores
    # `class_name:`.
    items = sorted(spec.grouped, key=_functional_name)
    run = BackendRun(backend, f"{key}NativeFunctions", spec.functions, items, SignatureSet())
    generated = frozenset(op.name for op in backend.full_codegen)
    if args.impl_path is not None:
        check_kernel_definitions(run, args.impl_path, generated=generated)
    texts = lazy_texts(run, options)
    check_shape_inference_header(run, options)
    files = output_set(args.output_dir, aten, GENERATOR)
    add_native_functions_header(files, run, backend_name=options.backend_name)
    style = RegistrationStyle(
        args.output_dir,
        build_in_tree=options.build_in_tree,
        per_operator_headers=options.per_operator_headers,
        eager=False,
        backend_name=options.backend_name,
    )
    add_registrations(files, run, style)
    add_lazy_files(files, run, texts, options, args.output_dir)
    write_files([files], dry_run=args.dry_run, make_roots=not args.dry_run)
    return 0


def _functional_name(item: NativeFunction | NativeFunctionsGroup) -> str:
    f = item.functional if isinstance(item, NativeFunctionsGroup) else item
    return str(f.func.name.name)
