"""The calling conventions generated code speaks, derived from function schemas.

Each module is one convention, made of pure functions of the model, and opens with a
description of the convention and how it differs from the others:

types              the C++ type model every convention shares: CTypes, Binding, Expr,
                   ArgumentStyle (torchgen's thread-local flags, passed explicitly), BindingMemo
cpp                the public C++ API: `at::add(self, other)`, `self.add(other)`
cpp_literals       schema defaults as C++ expressions, strings as C++ string literals
dispatcher         how the dispatcher calls kernels and everything calls the dispatcher
native             the functions in-tree kernels implement (`at::native::add_out`)
structured         the `meta()` and `impl()` functions of structured kernels
translate          expressions of one convention's arguments from another's bindings
signatures         every signature of one function, derived once (FunctionSignatures, SignatureSet)
functionalization  the `ViewMeta` classes and view inverses of view operators
ufunc              the C++ pieces of `ufunc_inner_loop:` kernels
python             the Python convention: how `torch.add(...)` is parsed and typed
pyi                type hints for the Python bindings' stubs
lazy               the lazy-tensor IR convention (LazyIrSchema, LazyArgument)
nanobind           the nanobind convention of MLX extensions
mlx_python         MLX's Python convention for bound functions: unions, weak scalars, shapes
aten_mlx           ATen overloads as C++ functions over MLX, bound to Python (`opgen aten-mlx`)
executorch         ExecuTorch's C++ convention: its types, kernels taking the runtime context
executorch_unboxing  ExecuTorch's boxed convention: arguments taken off the runtime's EValue stack

What the conventions are used for lives above them: the autograd model in
`opgen.autograd`, the Python-binding policy in `opgen.python_bindings`.
"""
