"""The PyTorch custom-op library target: `opgen torch-library`.

One spec in the library dialect (`opgen.spec.library`) and an optional
derivatives file in; a C++ operator library (schemas, registrations, kernel
declarations, C++ API, Autograd kernels) and a typed Python package out.
`library` reads and checks the input (`formula_calls`: the calls C++ formulas
may make; `formula_names`: the names formulas may read; `python_types`: the
Python types of the wrappers' signatures), `cpp_files`, `autograd`,
`backend_select` (factories' BackendSelect kernels) and `python_files` render
the pieces, `generate` lays out the files, `command` is the
command line and its `TARGET`.
"""
