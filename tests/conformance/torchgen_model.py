"""The `opgen dump` record of every function, computed from upstream torchgen's model.

This is the oracle side of the conformance tests: the same fields as
`opgen.tooling.dump.function_record`, read off torchgen's `NativeFunction` and
`BackendIndex` objects.
"""

from __future__ import annotations

from typing import Any

from torchgen.gen import (
    get_grouped_by_view_native_functions,
    get_grouped_native_functions,
    parse_native_yaml,
)
from torchgen.model import NativeFunction, NativeFunctionsGroup, NativeFunctionsViewGroup


def torchgen_records(native_yaml: str, tags_yaml: str) -> list[dict[str, Any]]:
    parsed = parse_native_yaml(native_yaml, tags_yaml)
    indices = parsed.backend_indices
    return [model_record(f, indices) for f in parsed.native_functions]


def torchgen_group_summary(native_yaml: str, tags_yaml: str) -> dict[str, list[list[str]]]:
    """Group membership by function name, for comparing groups and view groups."""
    fs = parse_native_yaml(native_yaml, tags_yaml).native_functions
    groups = [
        [str(f.func.name) for f in g.functions()]
        for g in get_grouped_native_functions(fs)
        if isinstance(g, NativeFunctionsGroup)
    ]
    views = [
        [
            str(g.view.func.name),
            str(g.view_inplace.func.name) if g.view_inplace else "",
            str(g.view_copy.func.name) if g.view_copy else "",
        ]
        for g in get_grouped_by_view_native_functions(fs)
        if isinstance(g, NativeFunctionsViewGroup)
    ]
    return {"groups": groups, "view_groups": views}


def model_record(f: NativeFunction, indices: Any) -> dict[str, Any]:
    precomputed = None
    if f.precomputed is not None:
        precomputed = {
            "replace": {k: [str(a) for a in v] for k, v in f.precomputed.replace.items()},
            "add": [str(a) for a in f.precomputed.add],
        }
    dispatch = {}
    for key, index in indices.items():
        m = index.get_kernel(f)
        if m is not None:
            dispatch[str(key)] = {
                "kernel": m.kernel,
                "structured": m.structured,
                "cpp_namespace": m.cpp_namespace,
            }
    return {
        "name": str(f.func.name),
        "namespace": f.namespace,
        "schema": str(f.func),
        "kind": f.func.kind().name,
        "variants": sorted(v.name for v in f.variants),
        "tags": sorted(f.tags),
        "dispatch": dispatch,
        "structured": f.structured,
        "structured_delegate": str(f.structured_delegate) if f.structured_delegate else None,
        "structured_inherits": f.structured_inherits,
        "precomputed": precomputed,
        "autogen": [str(n) for n in f.autogen],
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
            str(k): {"name": v.name, "dtypes": [str(d) for d in v.supported_dtypes]}
            for k, v in f.ufunc_inner_loop.items()
        },
        "view_schema_kind": f.view_schema_kind.name,
        "line": f.loc.line,
    }
