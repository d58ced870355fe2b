"""Builds aten_mlx: opgen generates PyTorch's ATen operators on MLX from torch's spec (the
installed torchgen's) and the lowering spec in lowering/, CMake compiles the extension.

    pip install --no-build-isolation ./examples/aten_mlx

(--no-build-isolation builds with the opgen, mlx, nanobind and torch already installed;
the nanobind must share MLX's nanobind ABI, or MLX's arrays are rejected at call time.
CMake and a C++20 compiler must be on PATH.) The package `aten_mlx` then holds one
function per lowered overload, OPERATORS, call() and load().
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
    sys.exit("building aten_mlx needs setuptools >= 70.1 (or wheel): pip install -U setuptools")

HERE = Path(__file__).resolve().parent
PACKAGE = "aten_mlx"


class BuildWithCMake(build_ext):
    """Generates the package with opgen, builds its extension with CMake, and copies both."""

    def build_extensions(self) -> None:
        temp = Path(self.build_temp).resolve()
        generated, cmake_dir = temp / "generated", temp / "cmake"
        specs = sorted(str(p) for p in (HERE / "lowering").glob("*.yaml"))
        run(sys.executable, "-m", "opgen", "aten-mlx", *specs, "-o", str(generated))
        run(
            "cmake", "-S", str(HERE), "-B", str(cmake_dir),
            f"-DOPGEN_GENERATED={generated}",
            f"-DPython_EXECUTABLE={sys.executable}",
            "-DCMAKE_BUILD_TYPE=Release",
        )  # fmt: skip
        run("cmake", "--build", str(cmake_dir), "-j", str(os.cpu_count() or 1))
        target = Path(self.get_ext_fullpath(f"{PACKAGE}._ops"))
        target.parent.mkdir(parents=True, exist_ok=True)
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        shutil.copyfile(cmake_dir / f"_ops{suffix}", target)
        for file in (generated / PACKAGE).iterdir():
            shutil.copyfile(file, target.parent / file.name)


def run(*command: str) -> None:
    subprocess.run(command, check=True)


setup(
    ext_modules=[Extension(f"{PACKAGE}._ops", sources=[])],
    cmdclass={"build_ext": BuildWithCMake},
)
