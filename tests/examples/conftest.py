"""Builds the example custom-op library (examples/torch_library) once per session.

opgen generates the library into a temporary directory, and
`torch.utils.cpp_extension.load` compiles the generated sources with the
example's kernels and loads them; the generated package is then importable.
Set OPGEN_EXAMPLE_BUILD_DIR to keep the compiler's output between sessions
(ninja then rebuilds only what changed).
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).parents[2] / "examples" / "torch_library"


@dataclass(frozen=True)
class BuiltExample:
    generated: Path  # opgen's output directory
    library: Path  # the compiled shared library


def _opgen(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "opgen", *args], check=True, capture_output=True, text=True
    )
    return done.stdout


@pytest.fixture(scope="session")
def built_example(tmp_path_factory: pytest.TempPathFactory) -> BuiltExample:
    from torch.utils.cpp_extension import load

    generated = tmp_path_factory.mktemp("generated")
    spec = str(EXAMPLE / "native_functions.yaml")
    _opgen("torch-library", spec, "-o", str(generated))
    sources = _opgen("torch-library", spec, "-o", str(generated), "--list-sources").split()
    build = os.environ.get("OPGEN_EXAMPLE_BUILD_DIR") or str(tmp_path_factory.mktemp("build"))
    os.makedirs(build, exist_ok=True)
    load(
        name="mylib_C",
        sources=[str(EXAMPLE / "csrc" / "kernels.cpp"), *sources],
        extra_include_paths=[str(generated / "include")],
        build_directory=build,
        is_python_module=False,
    )
    sys.path[:0] = [str(generated), str(EXAMPLE)]
    return BuiltExample(generated, Path(build) / "mylib_C.so")
