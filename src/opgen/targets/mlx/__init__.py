"""`opgen mlx`: an MLX extension module (nanobind) from an MLX operator spec.

The spec is read into `opgen.spec.mlx.MlxLibrary`; `library.bind` pairs each
operator with its nanobind signature (`opgen.api.nanobind`) once, and checks
what only generation needs (a primitive's inputs, names the generated code
uses). Each output file is then rendered by its own module from those bound
operators:

    <ns>_ops.h              operators.py   the C++ API, and what the author writes
    <ns>_ops.cpp            operators.py   composite operators (composite.py: the call,
                                           `custom_vjp` with the formulas) and
                                           primitives (primitives.py: a Primitive
                                           subclass per operator)
    <module>_bindings.cpp   bindings.py    one NB_MODULE, an `m.def` per operator, and
                            bound.py       a lambda per signature of each bound function,
                                           with the C++ of templates/ (support.h: MLX's
                                           conversions; indexing.h: `Index` and `a.at`)
    <module>.pyi            stubs.py       the typed stub
    <module>.cmake          build_files.py a CMake function building the extension

How arrays travel in one `std::vector<array>` (a Primitive's inputs, the
primals of `custom_vjp`) and which names a formula sees is `layout.py`; the C++
text every emitter shares (calls, functions, literals) is `cpp.py`. `generate.generate` reads
the spec and collects the files into an `OutputSet`; `options.py` holds the flags
(MlxOptions), and `command.py` is the command line and its `TARGET`.
"""
