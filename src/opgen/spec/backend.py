"""Per-backend kernel information: which kernel implements an operator for a key.

A `dispatch:` table in the spec says, for each dispatch key, the kernel that
implements the operator. opgen indexes this by key rather than by function
(`BackendIndex`), because out-of-tree backends add kernels for existing
operators after the fact and may make different choices (e.g. structured-ness).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from opgen.frozen import frozen
from opgen.spec.groups import NativeFunctionsGroup
from opgen.spec.keys import DispatchKey, needs_device_guard
from opgen.spec.schema import FunctionSchema, OperatorName

if TYPE_CHECKING:
    from opgen.spec.native import NativeFunction

# The C++ namespace of kernels whose dispatch entry names no namespace.
DEFAULT_KERNEL_NAMESPACE = "at::native"


def default_kernel_name(func: FunctionSchema) -> str:
    """The kernel name of an operator whose entry names none: its C++ API name.

    That is `add`, or `add_out` for an out= overload (see `opgen.api.cpp.name`).
    """
    base = str(func.name.name)
    return f"{base}_out" if func.is_out_fn() else base


@frozen
class BackendMetadata:
    kernel: str  # the kernel's name, without namespace
    structured: bool  # implemented as a structured (meta + impl) kernel
    cpp_namespace: str  # e.g. at::native

    @property
    def unstructured(self) -> BackendMetadata:
        return (
            self if not self.structured else BackendMetadata(self.kernel, False, self.cpp_namespace)
        )

    def supports_symint(self) -> bool:
        """A kernel named `*_symint*` takes SymInt arguments as c10::SymInt."""
        return "_symint" in self.kernel


@frozen
class BackendIndex:
    dispatch_key: DispatchKey  # the key its kernels are registered to
    use_out_as_primary: bool  # structured groups are implemented by their out= kernel
    device_guard: bool  # kernels need a device guard and device checks
    external: bool  # an out-of-tree backend
    index: Mapping[OperatorName, BackendMetadata]  # each operator's kernel for this key

    @staticmethod
    def in_tree(key: DispatchKey, index: Mapping[OperatorName, BackendMetadata]) -> BackendIndex:
        return BackendIndex(key, True, needs_device_guard(key), False, index)

    def primary(self, g: NativeFunctionsGroup) -> NativeFunction:
        return g.out if self.use_out_as_primary else g.functional

    def get_kernel(self, f: NativeFunction | NativeFunctionsGroup) -> BackendMetadata | None:
        function = self.primary(f) if isinstance(f, NativeFunctionsGroup) else f
        return self.index.get(function.func.name)

    def has_kernel(self, f: NativeFunction | NativeFunctionsGroup) -> bool:
        return self.get_kernel(f) is not None

    def native_function_class_name(self) -> str | None:
        return f"{self.dispatch_key}NativeFunctions" if self.external else None
