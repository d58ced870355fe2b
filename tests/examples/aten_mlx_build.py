"""Builds examples/aten_mlx into a directory, as its setup.py does, for the tests.

    python tests/examples/aten_mlx_build.py WORK_DIR

generates the package with `opgen aten-mlx` from examples/aten_mlx/lowering/*.yaml into
WORK_DIR/generated, builds its extension with CMake in WORK_DIR/cmake (again only what
changed), and assembles the importable package in WORK_DIR/package/aten_mlx: the
directory to put on sys.path is printed.
"""

from __future__ import annotations

import fcntl
import os
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
    """The directory holding the built package `aten_mlx`. Processes that build into the
    same `work` at once take turns (a lock file): the first builds, the others find the
    build up to date."""
    work.mkdir(parents=True, exist_ok=True)
    with open(work / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _build(work, example)


def _build(work: Path, example: Path) -> Path:
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
    target.mkdir(parents=True, exist_ok=True)
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    built_files = [*(generated / PACKAGE).iterdir(), cmake_dir / f"_ops{suffix}"]
    for source in built_files:
        _replace_if_changed(source, target / source.name)
    return package


def _replace_if_changed(source: Path, destination: Path) -> None:
    """Copy `source` over `destination` atomically, unless they hold the same bytes (a
    process may have the package imported)."""
    data = source.read_bytes()
    if destination.is_file() and destination.read_bytes() == data:
        return
    temporary = destination.with_name(f".{destination.name}.{os.getpid()}.tmp")
    temporary.write_bytes(data)
    os.replace(temporary, destination)


if __name__ == "__main__":
    print(build_package(Path(sys.argv[1]).resolve()))
