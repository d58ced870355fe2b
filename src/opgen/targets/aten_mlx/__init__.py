"""`opgen aten-mlx`: PyTorch's ATen operators on MLX, from torch's spec and a lowering spec.

The lowering spec (`opgen.spec.lowering`) says what MLX computes for each ATen overload;
the release's `native_functions.yaml` says everything else. The target writes a nanobind
extension and the Python package around it:

options     the flags of one run
command     the command line
generate    `read(options)`: the release's spec and the lowering spec, read and planned;
            `emit(model, options)`: the files, by the emitters below
functions   each lowering's C++ function (promotion, reductions, variants, the body)
sources     the C++ files: the functions in shards, their declarations, the bindings
package     the Python package: `__init__.py`, `_operators.py` (OPERATORS), the runtime,
            the stubs
build       the CMake file that builds the extension into the package
templates/  what every package holds as it is: the C++ runtime (promotion, dimensions,
            arguments) and its nanobind casters, the Python runtime (`load`, `call`)
"""
