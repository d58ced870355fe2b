"""Builds mlx_core_ops: opgen generates the bindings of mlx.core's operators from
mlx_core.yaml, CMake compiles them.

    pip install --no-build-isolation ./examples/mlx_core

(--no-build-isolation builds with the opgen, mlx and nanobind already installed; the
nanobind must share MLX's nanobind ABI, or MLX's arrays are rejected at call time.
CMake and a C++20 compiler must be on PATH.)

The module `mlx_core_ops` has the functions of `mlx.core` that the spec binds, with
their names, signatures and defaults; its stub (mlx_core_ops.pyi) goes beside it.
"""

from setuptools import setup

from opgen.building import mlx_modules

setup(**mlx_modules({"mlx_core_ops": "mlx_core.yaml"}))
