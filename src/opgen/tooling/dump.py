"""`opgen dump`: the model as JSON Lines, one object per native function.

The objects use the field names and values of torchgen's model, so that the
two can be compared key by key (see tests/conformance). With `--library` or
`--mlx` the spec is a library's or an MLX extension's, whose records are
`dump_extensions`'.

A dump renders thousands of small records, so `dump_lines` keeps what records
share for the length of the run (a `_Dump`): the text of each dispatch key,
each function's signatures (`SignatureSet`) and one JSON encoder.

Records are independent, so `dump_chunks` renders them in forked workers
(`opgen.forked`, as the ATen target renders its files): each takes runs of
consecutive functions and returns their lines as one text, and the texts come
back in spec order, so the output does not depend on the number of workers.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TextIO

from opgen.api import pyi
from opgen.api.cpp import CppSignatureGroup
from opgen.api.signatures import FunctionSignatures, SignatureSet
from opgen.diagnostics import write_diagnostics
from opgen.forked import ForkedFailure, run_forked
from opgen.jobs import add_jobs_argument, default_jobs
from opgen.releases import NEWEST, Release
from opgen.spec.backend import BackendMetadata
from opgen.spec.keys import DispatchKey
from opgen.spec.model import Spec
from opgen.spec.native import NativeFunction
from opgen.targets.contract import ToolCommand
from opgen.targets.torch_version import add_torch_version_argument
from opgen.tooling.dialects import add_dialect_arguments, dialect_of, needs_spec, read_as
from opgen.tooling.spec_files import add_spec_arguments, load_named_spec, named_release


def function_record(spec: Spec, f: NativeFunction) -> dict[str, Any]:
    return _Dump(spec).function_record(f)


def dump_lines(spec: Spec, *, signatures: bool = False, release: Release = NEWEST) -> Iterator[str]:
    return _Dump(spec, release).lines(spec.functions, signatures)


def dump_chunks(
    spec: Spec,
    *,
    signatures: bool = False,
    workers: int = 1,
    retain: Callable[[object], object] | None = None,
    release: Release = NEWEST,
) -> list[str]:
    """`dump_lines`, each line ending in a newline, joined into texts in spec order.

    Rendered in `workers` processes; the concatenated texts are the same for any number.
    `retain`, if given, receives what this process derives while rendering, which
    then outlives the call (see `opgen.cli.main`).
    """
    dump = _Dump(spec, release)  # each worker fills its own copy
    if retain is not None:
        retain(dump)
    functions = spec.functions

    def render(start: int, stop: int) -> str:
        return "".join([line + "\n" for line in dump.lines(functions[start:stop], signatures)])

    # Several runs per worker, so that one that finishes early takes more.
    count = max(1, min(len(functions), 1 if workers == 1 else _RUNS_PER_WORKER * workers))
    bounds = [len(functions) * i // count for i in range(count + 1)]
    tasks = [functools.partial(render, *run) for run in itertools.pairwise(bounds)]
    try:
        return run_forked(tasks, workers)
    except ForkedFailure as failure:  # a bug: show the error itself
        raise failure.error from None


_RUNS_PER_WORKER = 8


class _Dump:
    """One run's record builder: state shared by its records, owned by the run."""

    def __init__(self, spec: Spec, release: Release = NEWEST) -> None:
        self.spec = spec
        # The release's type hints, for the `python_pyi` declarations.
        self._hints = pyi.hints_for(release)
        # Dispatch keys are enum members, so their identity keys their text (hashing
        # an Enum member runs Python code); the members live as long as the process.
        self._key_names: dict[int, str] = {}
        # `json.dumps` escapes non-ASCII text, which a spec seldom has: render without
        # escaping (faster), and again with `json.dumps` a line that is not ASCII.
        # Records are trees, so there are no cycles to check for.
        self._encoder = json.JSONEncoder(ensure_ascii=False, check_circular=False)
        self._signatures = SignatureSet()

    def lines(self, functions: Iterable[NativeFunction], signatures: bool) -> Iterator[str]:
        for f in functions:
            kernels = self.spec.kernels(f)
            record = self.function_record(f, kernels)
            if signatures:
                record.update(self.signature_record(self._signatures.of(f), kernels))
            yield self.encode(record)

    def encode(self, record: dict[str, Any]) -> str:
        """`json.dumps(record)`, byte for byte."""
        line = self._encoder.encode(record)
        return line if line.isascii() else json.dumps(record)

    def key_name(self, key: DispatchKey) -> str:
        """`str(key)`."""
        name = self._key_names.get(id(key))
        if name is None:
            name = self._key_names[id(key)] = str(key)
        return name

    def function_record(
        self, f: NativeFunction, kernels: Mapping[DispatchKey, BackendMetadata] | None = None
    ) -> dict[str, Any]:
        """The model's fields; `kernels`, if given, must be `spec.kernels(f)`."""
        func = f.func
        if kernels is None:
            kernels = self.spec.kernels(f)
        precomputed = None
        if f.precomputed is not None:
            precomputed = {
                "replace": {k: [str(a) for a in v] for k, v in f.precomputed.replace.items()},
                "add": [str(a) for a in f.precomputed.add],
            }
        key_name = self.key_name
        return {
            "name": str(func.name),
            "namespace": f.namespace,
            "schema": str(func),
            "kind": func.kind.value,
            "variants": sorted([v.value for v in f.variants]),
            "tags": sorted(f.tags),
            "dispatch": {
                key_name(key): {
                    "kernel": m.kernel,
                    "structured": m.structured,
                    "cpp_namespace": m.cpp_namespace,
                }
                for key, m in kernels.items()
            },
            "structured": f.structured,
            "structured_delegate": str(f.structured_delegate) if f.structured_delegate else None,
            "structured_inherits": f.structured_inherits,
            "precomputed": precomputed,
            "autogen": [str(name) for name in f.autogen],
            "manual_kernel_registration": f.manual_kernel_registration,
            "manual_cpp_binding": f.manual_cpp_binding,
            "python_module": f.python_module,
            "category_override": f.category_override,
            "device_guard": f.device_guard,
            "device_check": f.device_check.name,
            "use_const_ref_for_mutable_tensors": f.use_const_ref_for_mutable_tensors,
            "cpp_no_default_args": sorted(f.cpp_no_default_args),
            "is_abstract": f.is_abstract,
            "has_composite_implicit_autograd_kernel": f.has_composite_implicit_autograd_kernel,
            "has_composite_implicit_autograd_nested_tensor_kernel": (
                f.has_composite_implicit_autograd_nested_tensor_kernel
            ),
            "has_composite_explicit_autograd_kernel": f.has_composite_explicit_autograd_kernel,
            "has_composite_explicit_autograd_non_functional_kernel": (
                f.has_composite_explicit_autograd_non_functional_kernel
            ),
            "ufunc_inner_loop": {
                str(key): {"name": loop.name, "dtypes": [str(d) for d in loop.supported_dtypes]}
                for key, loop in f.ufunc_inner_loop.items()
            },
            "view_schema_kind": f.view_schema_kind.value,
            "line": f.loc.line,
        }

    def signature_record(
        self,
        sigs: FunctionSignatures,
        kernels: Mapping[DispatchKey, BackendMetadata] | None = None,
    ) -> dict[str, Any]:
        """The declarations of every calling convention (`opgen dump --signatures`)."""
        if kernels is None:
            kernels = self.spec.kernels(sigs.f)
        python_sig = None
        python_pyi = None
        try:
            signature = sigs.python()
            python_sig = signature.signature_str()
            python_pyi = signature.signature_str_pyi(self._hints)
        except ValueError:  # not expressible in the Python bindings
            pass
        cpp_method = sigs.cpp_method
        return {
            "cpp": _decls(sigs.cpp),
            "cpp_method": None if cpp_method is None else _decls(cpp_method),
            "dispatcher": sigs.dispatcher.decl(),
            "native": self._native_decls(sigs, kernels),
            "python": python_sig,
            "python_pyi": python_pyi,
        }

    def _native_decls(
        self, sigs: FunctionSignatures, kernels: Mapping[DispatchKey, BackendMetadata]
    ) -> dict[str, str]:
        key_name = self.key_name
        return {key_name(key): sigs.native(m).decl(m.kernel) for key, m in kernels.items()}


def _decls(group: CppSignatureGroup) -> list[str]:
    return [s.decl() for s in group.signatures(symint=True)]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_spec_arguments(parser)
    add_torch_version_argument(parser)
    add_dialect_arguments(parser, "NATIVE_YAML")
    parser.add_argument(
        "--signatures",
        action="store_true",
        help="add each function's declarations: cpp, cpp_method, dispatcher, native, "
        "python and python_pyi (a library's: cpp, dispatcher and native; an MLX spec's: "
        "python)",
    )
    add_jobs_argument(parser, "the records")


def run_dump(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.library or args.mlx:
        return _dump_extension(args, out, err)
    release = named_release(args, "dump", err)
    if release is None:
        return 2
    spec = load_named_spec(args, "dump", release)
    write_diagnostics(spec.warnings, err)
    workers = default_jobs() if args.jobs is None else args.jobs
    chunks = dump_chunks(
        spec, signatures=args.signatures, workers=workers, retain=args.retain, release=release
    )
    for text in chunks:
        out.write(text)
    return 0


def _dump_extension(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """A library's or an MLX spec's records (few: rendered in this process)."""
    from opgen.tooling import dump_extensions

    dialect = dialect_of(args)
    path = args.native_yaml
    if path is None:
        err.write(f"opgen dump: error: {needs_spec(dialect)}\n")
        return 2
    if dialect == "library":
        from opgen.spec.model import LoadOptions, load_spec
        from opgen.tooling.spec_files import spec_paths

        tags = spec_paths(path, args.tags).tags
        spec = read_as(
            "library", path, "dump", lambda: load_spec(path, tags, LoadOptions(library=True))
        )
        args.retain(spec)
        write_diagnostics(spec.warnings, err)
        records = dump_extensions.library_records(spec, args.signatures)
    else:
        from opgen.spec.mlx.reader import load_mlx_library

        library = read_as("mlx", path, "dump", lambda: load_mlx_library(path))
        args.retain(library)
        records = dump_extensions.mlx_records(library, args.signatures)
    for record in records:
        out.write(json.dumps(record) + "\n")
    return 0


TOOL = ToolCommand(
    name="dump",
    help="print the model as JSON Lines",
    description="Print one JSON object per native function, derived ones included.",
    add_arguments=add_arguments,
    run=run_dump,
)
