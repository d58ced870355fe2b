"""MLX extension specs: operators for Apple's MLX, bound with nanobind, with gradients.

Two dialects describe the same thing (`model`): opgen's spec language with a
library namespace (`- func: mlxlib::rms_norm(Tensor x, Tensor weight,
float eps=1e-5) -> Tensor`, where `Tensor` is an `mlx::core::array`), and a
minimal MLX dialect written with C++ and Python signatures (`name:`,
`signature:` or `cpp_signature:`/`python_signature:`, `python_name:`, `doc:`,
`grad:`, `dispatch:`, `shape:`). Both read into `MlxLibrary`, whose
operators hold a `FunctionSchema` of the spec model, so that every type and
default has one representation and the nanobind convention
(`opgen.api.nanobind`) is a layer over the schema like the others.

model             MlxLibrary and MlxOperator, whichever dialect wrote them
reader            reading a spec, either dialect, into an MlxLibrary
spec_entry        an entry in opgen's spec language (`- func: ...`)
mlx_entry         an entry of the MLX dialect (C++ and Python signatures)
cpp_signature     the MLX dialect's C++ declarations (MlxCppSignature)
python_signature  the MLX dialect's Python signatures (MlxPythonSignature)
declarations      what the two kinds of signature share: parameters and lists
type_mapping      types and default values, in the three ways a spec writes them
operators         one entry, either dialect, to an MlxOperator: shared keys and checks
derivatives       which derivatives file a spec has (`opgen.spec.derivatives` reads it)
formulas          checking the C++ of gradient formulas and `shape:` rules
mlx_headers       the names `mlx::core` declares, read from MLX's installed headers
python_types      the Python types and defaults of bound functions (unions, `scalar | array`)
bound_entry       a bound function of the MLX dialect: a Python signature bound to existing C++
bound_spec_entry  a bound function in opgen's spec language (overload names as unions)
methods           the methods of `array` a bound entry declares: variants, operators, properties

Bound functions (`MlxFunction`) bind existing C++ functions, such as
`mlx::core`'s, with MLX's own Python conventions and no `_impl`; their model is
their own, a Python signature, and their convention `opgen.api.mlx_python`.
"""
