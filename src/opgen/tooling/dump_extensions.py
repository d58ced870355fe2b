"""`opgen dump --library` and `opgen dump --mlx`: the records of an extension's operators.

One JSON object per operator, in spec order, as `opgen dump` prints a PyTorch spec's,
with the fields that apply to the dialect:

- a library operator: `name`, `namespace`, `schema`, `kind`, `tags`, `dispatch` (dispatch
  key to `kernel` and `cpp_namespace`), `python_dispatch` (dispatch key to the Python
  kernel, `module:function`), `fake`, `doc`, `device_guard`,
  `use_const_ref_for_mutable_tensors`, `cpp_no_default_args` and `line`; `--signatures`
  adds `cpp`, `dispatcher` and `native`, the declarations of the C++ API, the
  dispatcher and each kernel, as `opgen dump` gives them for PyTorch's operators;
- an MLX operator: `name` (the C++ function), `namespace`, `python_name`, `schema`,
  `kind` (`composite` or `primitive`), `dispatch` (`cpu`/`gpu` to the kernel), `shape`,
  `gradients` (the arguments with a gradient formula, from `grad:` or the derivatives
  file beside the spec), `doc` and `line`; a bound function (existing C++ under MLX's
  Python conventions): `name` (qualified: `linalg.norm`, `array.sum`), `namespace`,
  `python_name`, `kind` (`bound`, or `method` and `property` of `array`), `calls` (the
  C++ each overload runs), `doc` and `line`. `--signatures` adds `python`: the stub's
  definition of an operator, and one per overload of a bound function.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from opgen.spec.mlx.model import BoundAs, MlxFunction, MlxLibrary, MlxOperator
from opgen.spec.model import Spec
from opgen.spec.native import NativeFunction


def library_records(spec: Spec, signatures: bool) -> Iterator[dict[str, Any]]:
    from opgen.api.signatures import SignatureSet

    memo = SignatureSet()
    for f in spec.functions:
        record = library_record(spec, f)
        if signatures:
            sigs = memo.of(f)
            kernels = spec.kernels(f)
            record["cpp"] = [s.decl() for s in sigs.cpp.signatures(symint=True)]
            record["dispatcher"] = sigs.dispatcher.decl()
            record["native"] = {
                str(key): sigs.native(m).decl(m.kernel) for key, m in kernels.items()
            }
        yield record


def library_record(spec: Spec, f: NativeFunction) -> dict[str, Any]:
    extensions = f.extensions
    return {
        "name": str(f.func.name),
        "namespace": f.namespace,
        "schema": str(f.func),
        "kind": f.func.kind.value,
        "tags": sorted(f.tags),
        "dispatch": {
            str(key): {"kernel": m.kernel, "cpp_namespace": m.cpp_namespace}
            for key, m in spec.kernels(f).items()
        },
        "python_dispatch": {str(key): str(ref) for key, ref in extensions.python_kernels.items()},
        "fake": None if extensions.fake is None else str(extensions.fake),
        "doc": extensions.doc,
        "device_guard": f.device_guard,
        "use_const_ref_for_mutable_tensors": f.use_const_ref_for_mutable_tensors,
        "cpp_no_default_args": sorted(f.cpp_no_default_args),
        "line": f.loc.line,
    }


def mlx_records(library: MlxLibrary, signatures: bool) -> Iterator[dict[str, Any]]:
    for function in library.functions:
        if function.operator is None:
            yield bound_function_record(library, function, signatures)
        elif function.bound_as is BoundAs.FUNCTION:
            yield mlx_operator_record(library, function, function.operator, signatures)


def mlx_operator_record(
    library: MlxLibrary, function: MlxFunction, op: MlxOperator, signatures: bool
) -> dict[str, Any]:
    record: dict[str, Any] = {
        "name": op.name,
        "namespace": library.namespace,
        "python_name": function.python_name,
        "schema": str(op.func),
        "kind": "primitive" if op.is_primitive else "composite",
        "dispatch": dict(op.dispatch),
        "shape": op.shape,
        "gradients": [grad.input for grad in op.grads],
        "doc": function.doc,
        "line": op.location.line,
    }
    if signatures:
        from opgen.api import nanobind

        record["python"] = nanobind.signature(op.func).stub(function.python_name)
    return record


def bound_function_record(
    library: MlxLibrary, function: MlxFunction, signatures: bool
) -> dict[str, Any]:
    record: dict[str, Any] = {
        "name": function.qualified_name,
        "namespace": library.namespace,
        "python_name": function.python_name,
        "kind": "bound" if function.bound_as is BoundAs.FUNCTION else function.bound_as.value,
        "calls": [
            overload.function if overload.function is not None else overload.code
            for overload in function.overloads
        ],
        "doc": function.doc,
        "line": function.location.line,
    }
    if signatures:
        from opgen.api.mlx_python import signature_texts

        record["python"] = signature_texts(function)
    return record
