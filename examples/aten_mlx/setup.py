"""Builds aten_mlx: opgen generates PyTorch's ATen operators on MLX from torch's spec (the
installed torchgen's) and the lowering spec in lowering/, CMake compiles the extension.

    pip install --no-build-isolation ./examples/aten_mlx

(--no-build-isolation builds with the opgen, mlx, nanobind and torch already installed;
the nanobind must share MLX's nanobind ABI, or MLX's arrays are rejected at call time.
CMake and a C++20 compiler must be on PATH.) The package `aten_mlx`, which opgen writes
beside the extension `aten_mlx._ops`, then holds one function per lowered overload,
OPERATORS, call() and load().
"""

from pathlib import Path

from setuptools import setup

from opgen.building import BuildWithCMake, OpgenExtension, require_wheel_support

LOWERING = sorted(str(p) for p in Path("lowering").glob("*.yaml"))

require_wheel_support()
setup(
    ext_modules=[OpgenExtension("aten_mlx._ops", ["aten-mlx", *LOWERING])],
    cmdclass={"build_ext": BuildWithCMake},
)
