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
"""
