"""Every signature of one function, derived on first use and kept.

Emitters ask a `FunctionSignatures` for what they need (`sigs.cpp`,
`sigs.native(metadata)`, `sigs.python()`); each is derived once per function,
whatever number of files use it. The per-function choices torchgen keeps in
thread-local state come from the function itself (`ArgumentStyle.of`).
"""

from __future__ import annotations

from dataclasses import dataclass

from opgen.api.cpp import CppSignatureGroup
from opgen.api.dispatcher import DispatcherSignature
from opgen.api.native import NativeSignature
from opgen.api.python import PythonSignature, signature
from opgen.api.types import ArgumentStyle, BindingMemo
from opgen.cached import cached
from opgen.spec.backend import BackendMetadata
from opgen.spec.keys import Variant
from opgen.spec.native import NativeFunction


class SignatureSet:
    """The signatures of a run's functions, sharing one `BindingMemo`."""

    def __init__(self) -> None:
        self.memo = BindingMemo()
        self._by_function: dict[NativeFunction, FunctionSignatures] = {}

    def of(self, f: NativeFunction) -> FunctionSignatures:
        found = self._by_function.get(f)
        if found is None:
            found = self._by_function[f] = FunctionSignatures(f, self.memo)
        return found


@dataclass(frozen=True, eq=False)
class FunctionSignatures:
    f: NativeFunction
    memo: BindingMemo | None = None

    @cached
    def style(self) -> ArgumentStyle:
        return ArgumentStyle.of(self.f)

    @cached
    def cpp(self) -> CppSignatureGroup:
        """The `at::` functions; `__dispatch_` fallbacks for `manual_cpp_binding` functions."""
        return CppSignatureGroup.from_native_function(
            self.f, method=False, fallback_binding=self.f.manual_cpp_binding, memo=self.memo
        )

    @cached
    def cpp_method(self) -> CppSignatureGroup | None:
        """The Tensor methods, if the function is one."""
        if Variant.method not in self.f.variants:
            return None
        return CppSignatureGroup.from_native_function(
            self.f, method=True, fallback_binding=self.f.manual_cpp_binding, memo=self.memo
        )

    @cached
    def dispatcher(self) -> DispatcherSignature:
        return DispatcherSignature(self.f.func, self.style, memo=self.memo)

    @cached
    def _native_symint(self) -> NativeSignature:
        return NativeSignature(self.f.func, True, self.style, memo=self.memo)

    @cached
    def _native_int(self) -> NativeSignature:
        return NativeSignature(self.f.func, False, self.style, memo=self.memo)

    def native(self, metadata: BackendMetadata) -> NativeSignature:
        """The in-tree kernel signature for a backend's kernel of this function."""
        return self._native_symint if metadata.supports_symint() else self._native_int

    def python(self, *, method: bool = False) -> PythonSignature:
        """The Python signature; ValueError where the bindings cannot express the function."""
        return self._python_method if method else self._python_function

    @cached
    def _python_function(self) -> PythonSignature:
        return signature(self.f, method=False)

    @cached
    def _python_method(self) -> PythonSignature:
        return signature(self.f, method=True)
