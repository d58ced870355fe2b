"""MLX extension specs: operators for Apple's MLX, bound with nanobind, with gradients,
and functions bound to existing C++ (`mlx::core`'s own).

Two dialects describe the same thing (`model`): opgen's spec language with a
library namespace (`- func: mlxlib::rms_norm(Tensor x, Tensor weight,
float eps=1e-5) -> Tensor`, where `Tensor` is an `mlx::core::array`), and a
minimal MLX dialect written with C++ and Python signatures (`name:`,
`signature:` or `cpp_signature:`/`python_signature:`, `python_name:`, `doc:`,
`grad:`, `dispatch:`, `shape:`). Both read into `MlxLibrary`, one `MlxFunction`
per entry: what Python sees, which runs an operator the extension defines
(holding a `FunctionSchema` of the spec model, so that every type and default
has one representation and the nanobind convention, `opgen.api.nanobind`, is a
layer over the schema like the others) or existing C++ functions under MLX's
own Python conventions (`opgen.api.mlx_python`). Gradient formulas in a
derivatives file are read by `opgen.spec.derivatives`.

model             MlxLibrary, MlxFunction and MlxOperator, whichever dialect wrote them
reader            reading a spec, either dialect, into an MlxLibrary
spec_language     an entry of opgen's spec language (`- func: ...`): an operator or bound
mlx_dialect       an entry of the MLX dialect (C++ and Python signatures): an operator or bound
cpp_signature     the MLX dialect's C++ declarations (MlxCppSignature)
python_signature  the MLX dialect's Python signatures of operators (MlxPythonSignature)
bound_signature   the MLX dialect's Python signatures of bound functions (PyParameter)
declarations      what the kinds of signature share: parameters and lists
calls             what a bound function runs, either dialect: `call:`, `code:`, `promote:`
type_mapping      types and default values, in the three ways a spec writes them
operators         an operator, either dialect: shared keys and checks, to its MlxFunction
derivatives       which derivatives file a spec has (`opgen.spec.derivatives` reads it)
formulas          checking the C++ of gradient formulas and `shape:` rules
mlx_headers       the names `mlx::core` declares, read from MLX's installed headers
python_types      the Python types and defaults of bound functions (unions, `scalar | array`)
methods           the methods of `array` an entry declares: variants, operators, properties
"""
