"""Build an MLX extension as its CMake project builds it, for tests and benchmarks.

`opgen mlx` writes each spec's files into `generated`; the project's CMakeLists.txt
takes that directory as `OPGEN_GENERATED` and builds the modules in `build`, in
Release mode, with this interpreter's Python.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path


def run(*command: str) -> str:
    """What the command printed; RuntimeError with all of it if the command fails."""
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def build_extension(specs: Iterable[Path], project: Path, generated: Path, build: Path) -> Path:
    """`opgen mlx` on each of `specs` into `generated`, then the CMake `project` into
    `build`; the directory holding the modules (`build`)."""
    for spec in specs:
        run(sys.executable, "-m", "opgen", "mlx", str(spec), "-o", str(generated))
    run(
        "cmake",
        *("-S", str(project), "-B", str(build)),
        f"-DOPGEN_GENERATED={generated}",
        f"-DPython_EXECUTABLE={sys.executable}",
        "-DCMAKE_BUILD_TYPE=Release",
    )
    run("cmake", "--build", str(build), "-j", str(os.cpu_count() or 1))
    return build
