"""Builds mlx_core_ops: opgen generates the bindings of mlx.core's operators from
mlx_core.yaml, CMake compiles them.

    pip install --no-build-isolation ./examples/mlx_core

(--no-build-isolation builds with the opgen, mlx and nanobind already installed; the
nanobind must share MLX's nanobind ABI, or MLX's arrays are rejected at call time.
CMake and a C++20 compiler must be on PATH.)

The module `mlx_core_ops` has the functions of `mlx.core` that the spec binds, with
their names, signatures and defaults; its stub (mlx_core_ops.pyi) goes beside it.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

if not any(importlib.util.find_spec(m) for m in ("setuptools.command.bdist_wheel", "wheel")):
    sys.exit("building mlx_core_ops needs setuptools >= 70.1 (or wheel): pip install -U setuptools")

HERE = Path(__file__).resolve().parent
MODULE = "mlx_core_ops"


class BuildWithCMake(build_ext):
    """Generates the bindings with opgen, builds them with CMake, and copies the module."""

    def build_extensions(self) -> None:
        temp = Path(self.build_temp).resolve()
        generated, cmake_dir = temp / "generated", temp / "cmake"
        run(sys.executable, "-m", "opgen", "mlx", str(HERE / "mlx_core.yaml"), "-o", str(generated))
        run(
            "cmake", "-S", str(HERE), "-B", str(cmake_dir),
            f"-DOPGEN_GENERATED={generated}",
            f"-DPython_EXECUTABLE={sys.executable}",
            "-DCMAKE_BUILD_TYPE=Release",
        )  # fmt: skip
        run("cmake", "--build", str(cmake_dir), "-j", str(os.cpu_count() or 1))
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        target = Path(self.get_ext_fullpath(MODULE))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(cmake_dir / f"{MODULE}{suffix}", target)
        shutil.copyfile(generated / f"{MODULE}.pyi", target.parent / f"{MODULE}.pyi")


def run(*command: str) -> None:
    subprocess.run(command, check=True)


setup(
    ext_modules=[Extension(MODULE, sources=[])],
    cmdclass={"build_ext": BuildWithCMake},
)
