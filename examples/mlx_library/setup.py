"""Builds mlx_library: opgen generates each extension module from its spec, CMake compiles it.

    pip install --no-build-isolation ./examples/mlx_library

(--no-build-isolation builds with the opgen, mlx and nanobind already installed; the
nanobind must share MLX's nanobind ABI, or MLX arrays are rejected at call time. CMake
and a C++20 compiler must be on PATH.) `mlx_modules` runs `opgen mlx` on ops.yaml and
kernels.yaml, then this directory's CMakeLists.txt, which compiles the generated sources
with src/*.cpp into the modules mlx_library.ops and mlx_library.kernels; each module's
stub (.pyi) goes beside it.
"""

from setuptools import setup

from opgen.building import mlx_modules

setup(**mlx_modules({"mlx_library.ops": "ops.yaml", "mlx_library.kernels": "kernels.yaml"}))
