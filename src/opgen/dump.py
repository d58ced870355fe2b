"""`opgen dump`: the model as JSON Lines, one object per native function.

The objects use the field names and values of torchgen's model, so that the
two can be compared key by key (see tests/conformance).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from opgen.api.cpp import CppSignatureGroup
from opgen.api.signatures import FunctionSignatures, SignatureSet
from opgen.spec.model import Spec
from opgen.spec.native import NativeFunction


def function_record(spec: Spec, f: NativeFunction) -> dict[str, Any]:
    precomputed = None
    if f.precomputed is not None:
        precomputed = {
            "replace": {k: [str(a) for a in v] for k, v in f.precomputed.replace.items()},
            "add": [str(a) for a in f.precomputed.add],
        }
    return {
        "name": str(f.func.name),
        "namespace": f.namespace,
        "schema": str(f.func),
        "kind": f.func.kind.value,
        "variants": sorted(v.value for v in f.variants),
        "tags": sorted(f.tags),
        "dispatch": {
            str(key): {
                "kernel": m.kernel,
                "structured": m.structured,
                "cpp_namespace": m.cpp_namespace,
            }
            for key, m in spec.kernels(f).items()
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


def signature_record(spec: Spec, sigs: FunctionSignatures) -> dict[str, Any]:
    """The declarations of every calling convention (`opgen dump --signatures`)."""
    f = sigs.f
    python_sig = None
    python_pyi = None
    try:
        signature = sigs.python()
        python_sig = signature.signature_str()
        python_pyi = signature.signature_str_pyi()
    except ValueError:  # not expressible in the Python bindings
        pass
    return {
        "cpp": _decls(sigs.cpp),
        "cpp_method": None if sigs.cpp_method is None else _decls(sigs.cpp_method),
        "dispatcher": sigs.dispatcher.decl(),
        "native": {
            str(key): sigs.native(m).decl(name=m.kernel) for key, m in spec.kernels(f).items()
        },
        "python": python_sig,
        "python_pyi": python_pyi,
    }


def _decls(group: CppSignatureGroup) -> list[str]:
    return [s.decl() for s in group.signatures(symint=True)]


def dump_lines(spec: Spec, *, signatures: bool = False) -> Iterator[str]:
    signature_set = SignatureSet()
    for f in spec.functions:
        record = function_record(spec, f)
        if signatures:
            record.update(signature_record(spec, signature_set.of(f)))
        yield json.dumps(record, separators=(", ", ": "))
