"""Building what opgen generates: a few lines of `setup.py` per library.

A library's `setup.py` runs opgen, then compiles what it wrote with the author's
kernels. The functions here do both, with every message of opgen and of the
compiler on the build's standard error as it is written, where pip shows it (all
of it when the build fails, and as it runs with `pip -v`); a failing step ends
the build with one line saying which (`error: ...`), not a traceback.

commands       running opgen and CMake with their messages on standard error;
               `BuildFailed`, the one-line end of a failed build
cpp_extension  `torch_library()`: `opgen torch-library`'s package and its C++
               compiled as torch's `CppExtension` (no CMake)
cmake_build    `mlx_modules()`: `opgen mlx`'s modules built by the project's
               CMakeLists.txt; `OpgenExtension` and `BuildWithCMake` for any
               target whose generated CMake function builds the module

    from setuptools import setup
    from opgen.building import torch_library

    setup(**torch_library("native_functions.yaml", kernels=["kernels.cpp"]))

Nothing here imports torch or MLX until a build asks for it; setuptools is
imported, since these are setup.py's helpers.
"""

from __future__ import annotations

from opgen.building.cmake_build import BuildWithCMake, OpgenExtension, mlx_modules
from opgen.building.commands import BuildFailed, opgen_listing, require_wheel_support, run_opgen
from opgen.building.cpp_extension import torch_library

__all__ = [
    "BuildFailed",
    "BuildWithCMake",
    "OpgenExtension",
    "mlx_modules",
    "opgen_listing",
    "require_wheel_support",
    "run_opgen",
    "torch_library",
]
