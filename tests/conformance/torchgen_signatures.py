"""The `opgen dump --signatures` keys of every function, computed through upstream torchgen.

This is the oracle side of the API-layer conformance tests. Each key is what torchgen's
API modules give for the function when called the way torchgen's generators call them:
inside `native_function_manager(f)`, which sets the per-function thread-local options.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from torchgen.api import python
from torchgen.api.types import CppSignatureGroup, DispatcherSignature, NativeSignature
from torchgen.context import native_function_manager
from torchgen.gen import parse_native_yaml
from torchgen.model import BackendIndex, DispatchKey, NativeFunction, Variant

from .torchgen_model import model_record


def torchgen_signature_records(native_yaml: str, tags_yaml: str) -> list[dict[str, Any]]:
    parsed = parse_native_yaml(native_yaml, tags_yaml)
    indices = parsed.backend_indices
    return [signature_record(f, indices) for f in parsed.native_functions]


def torchgen_dump_lines(native_yaml: str, tags_yaml: str) -> Iterator[str]:
    """What `opgen dump --signatures` prints, computed through torchgen (for benchmarks)."""
    parsed = parse_native_yaml(native_yaml, tags_yaml)
    indices = parsed.backend_indices
    for f in parsed.native_functions:
        record = model_record(f, indices)
        record.update(signature_record(f, indices))
        yield json.dumps(record, separators=(", ", ": "))


def signature_record(f: NativeFunction, indices: dict[DispatchKey, BackendIndex]) -> dict[str, Any]:
    with native_function_manager(f):
        return {
            "name": str(f.func.name),
            "cpp": _cpp_decls(f, method=False),
            "cpp_method": _cpp_decls(f, method=True) if Variant.method in f.variants else None,
            "dispatcher": DispatcherSignature.from_schema(f.func).decl(),
            "native": _native_decls(f, indices),
            "python": _python(f),
            "python_pyi": _python_pyi(f),
        }


def _cpp_decls(f: NativeFunction, *, method: bool) -> list[str]:
    group = CppSignatureGroup.from_native_function(
        f, method=method, fallback_binding=f.manual_cpp_binding
    )
    return [s.decl() for s in group.signatures(symint=True)]


def _native_decls(f: NativeFunction, indices: dict[DispatchKey, BackendIndex]) -> dict[str, str]:
    decls = {}
    for key, index in indices.items():
        m = index.get_kernel(f)
        if m is not None:
            sig = NativeSignature(f.func, symint=m.supports_symint())
            decls[str(key)] = sig.decl(name=m.kernel)
    return decls


def _python(f: NativeFunction) -> str | None:
    try:
        return python.signature(f, method=False).signature_str()
    except (AssertionError, RuntimeError, ValueError):
        return None


def _python_pyi(f: NativeFunction) -> str | None:
    try:
        return python.signature(f, method=False, pyi=True).signature_str_pyi()
    except (AssertionError, RuntimeError, ValueError):
        return None
