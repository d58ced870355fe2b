"""Builds mlx_library: opgen generates each extension module from its spec, CMake compiles it.

    pip install --no-build-isolation ./examples/mlx_library

(--no-build-isolation builds with the opgen, mlx and nanobind already
installed, instead of fetching them into a throwaway build environment, so the
build uses the environment's setuptools too: building a wheel needs >= 70.1, or
the `wheel` package. CMake and a C++20 compiler must be on PATH. nanobind must
share MLX's nanobind ABI, or MLX arrays are rejected at call time.)

The build runs `opgen mlx` on ops.yaml and kernels.yaml, then this directory's
CMakeLists.txt, which compiles the generated sources with src/*.cpp into the
modules mlx_library.ops and mlx_library.kernels; each module's stub (.pyi)
goes beside it.
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
    sys.exit("building mlx_library needs setuptools >= 70.1 (or wheel): pip install -U setuptools")

HERE = Path(__file__).resolve().parent
MODULES = {"mlx_library.ops": "ops.yaml", "mlx_library.kernels": "kernels.yaml"}


class BuildWithCMake(build_ext):
    """Generates the sources with opgen, builds them with CMake, and copies the modules."""

    def build_extensions(self) -> None:
        temp = Path(self.build_temp).resolve()
        generated, cmake_dir = temp / "generated", temp / "cmake"
        for spec in MODULES.values():
            run(sys.executable, "-m", "opgen", "mlx", str(HERE / spec), "-o", str(generated))
        run(
            "cmake", "-S", str(HERE), "-B", str(cmake_dir),
            f"-DOPGEN_GENERATED={generated}",
            f"-DPython_EXECUTABLE={sys.executable}",
            "-DCMAKE_BUILD_TYPE=Release",
        )  # fmt: skip
        run("cmake", "--build", str(cmake_dir), "-j", str(os.cpu_count() or 1))
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        for ext in self.extensions:
            short = ext.name.rpartition(".")[2]
            target = Path(self.get_ext_fullpath(ext.name))
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(cmake_dir / f"{short}{suffix}", target)
            shutil.copyfile(generated / f"{short}.pyi", target.parent / f"{short}.pyi")


def run(*command: str) -> None:
    subprocess.run(command, check=True)


setup(
    ext_modules=[Extension(name, sources=[]) for name in MODULES],
    cmdclass={"build_ext": BuildWithCMake},
)
