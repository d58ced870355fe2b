"""Every signature of one function, derived on first use and kept.

Emitters ask a `FunctionSignatures` for what they need (`sigs.cpp`,
`sigs.native(metadata)`, `sigs.python()`); each is derived once per function,
whatever number of files use it. The per-function choices torchgen keeps in
thread-local state come from the function itself (`ArgumentStyle.of`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from opgen.api import cpp
from opgen.api.cpp import CppSignatureGroup
from opgen.api.dispatcher import DispatcherSignature
from opgen.api.native import NativeSignature
from opgen.api.types import ArgumentStyle, BindingMemo, R, Result
from opgen.cached import cached
from opgen.frozen import field, frozen
from opgen.spec.backend import BackendMetadata
from opgen.spec.keys import Variant
from opgen.spec.native import NativeFunction

if TYPE_CHECKING:  # the Python convention is imported by the targets that use it
    from opgen.api.python import PythonSignature


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


@frozen(eq=False)
class FunctionSignatures:
    f: NativeFunction
    memo: BindingMemo | None = None
    # Every signature needs it, so __post_init__ sets it.
    style: ArgumentStyle = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.__dict__["style"] = ArgumentStyle.of(self.f)

    @cached
    def _result(self) -> Result:
        """What every C++ convention's signature of the function returns (they convert
        returns alike), found once and handed to each (`with_result`)."""
        returns, style, memo = self.f.func.returns, self.style, self.memo
        if memo is None:
            return Result(cpp.returns_type(returns, style=style))
        return memo.result(style, returns, cpp.returns_type)

    @cached
    def cpp(self) -> CppSignatureGroup:
        """The `at::` functions; `__dispatch_` fallbacks for `manual_cpp_binding` functions."""
        return self._cpp_group(method=False)

    @cached
    def cpp_method(self) -> CppSignatureGroup | None:
        """The Tensor methods, if the function is one."""
        if Variant.method not in self.f.variants:
            return None
        return self._cpp_group(method=True)

    def _cpp_group(self, *, method: bool) -> CppSignatureGroup:
        f = self.f
        return CppSignatureGroup.from_native_function(
            f,
            method=method,
            fallback_binding=f.manual_cpp_binding,
            memo=self.memo,
            style=self.style,
            result=self._known_result(),
        )

    @cached
    def dispatcher(self) -> DispatcherSignature:
        return self._given_result(DispatcherSignature(self.f.func, self.style, "", True, self.memo))

    @cached
    def _native_symint(self) -> NativeSignature:
        return self._given_result(NativeSignature(self.f.func, True, self.style, "", self.memo))

    @cached
    def _native_int(self) -> NativeSignature:
        return self._given_result(NativeSignature(self.f.func, False, self.style, "", self.memo))

    def _given_result(self, sig: R) -> R:
        result = self._known_result()
        return sig if result is None else sig.with_result(result)

    def _known_result(self) -> Result | None:
        """`_result`; None where the returns have no C++ type, which the signatures
        then report when asked for what they return, as they always did."""
        try:
            return self._result
        except cpp.NoCppType:
            return None

    def native(self, metadata: BackendMetadata) -> NativeSignature:
        """The in-tree kernel signature for a backend's kernel of this function."""
        return self._native_symint if metadata.supports_symint() else self._native_int

    def python(self, *, method: bool = False) -> PythonSignature:
        """The Python signature; ValueError where the bindings cannot express the function."""
        return self._python_method if method else self._python_function

    @cached
    def _python_function(self) -> PythonSignature:
        from opgen.api.python import signature

        return signature(self.f, method=False, memo=self.memo)

    @cached
    def _python_method(self) -> PythonSignature:
        from opgen.api.python import signature

        return signature(self.f, method=True, memo=self.memo)
