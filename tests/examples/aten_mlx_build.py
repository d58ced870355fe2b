"""Builds examples/aten_mlx into a directory, as its setup.py does, for the tests.

    python tests/examples/aten_mlx_build.py WORK_DIR

generates the package with `opgen aten-mlx` from examples/aten_mlx/lowering/*.yaml into
WORK_DIR/generated, builds its extension with CMake in WORK_DIR/cmake (again only what
changed), and assembles the importable package in WORK_DIR/package/aten_mlx: the
directory to put on sys.path is printed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "aten_mlx"
PACKAGE = "aten_mlx"


def lowering_files(example: Path = EXAMPLE) -> list[str]:
    return sorted(str(p) for p in (example / "lowering").glob("*.yaml"))


def build_package(work: Path, example: Path = EXAMPLE) -> Path:
    """The directory holding the built package `aten_mlx`."""
    generated, cmake_dir, package = work / "generated", work / "cmake", work / "package"
    opgen = [sys.executable, "-m", "opgen", "aten-mlx", *lowering_files(example)]
    subprocess.run([*opgen, "-o", str(generated)], check=True)
    if not (cmake_dir / "CMakeCache.txt").is_file():
        subprocess.run(
            [
                "cmake", "-S", str(example), "-B", str(cmake_dir),
                f"-DOPGEN_GENERATED={generated}", f"-DPython_EXECUTABLE={sys.executable}",
                "-DCMAKE_BUILD_TYPE=Release",
            ],
            check=True,
            capture_output=True,
        )  # fmt: skip
    jobs = str(os.cpu_count() or 1)
    built = subprocess.run(
        ["cmake", "--build", str(cmake_dir), "-j", jobs], capture_output=True, text=True
    )
    if built.returncode != 0:
        raise RuntimeError(f"the build of {PACKAGE} failed:\n{built.stdout[-8000:]}")
    target = package / PACKAGE
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(generated / PACKAGE, target)
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    shutil.copyfile(cmake_dir / f"_ops{suffix}", target / f"_ops{suffix}")
    return package


if __name__ == "__main__":
    print(build_package(Path(sys.argv[1]).resolve()))
