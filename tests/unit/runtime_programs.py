"""Small C++ programs compiled against the ATen-on-MLX runtime header, for the tests that
compare its helpers with torch (promotion, division, reductions).

`compile_program(source, folder)` writes `source` beside the runtime's templates, compiles
it with MLX's installed headers and library (C++20, no optimization: the programs only
print), and returns the executable; the test is skipped without MLX's headers or a C++
compiler.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from opgen.targets.aten_mlx import functions

TEMPLATES = Path(functions.__file__).parent / "templates"


def compile_program(source: str, folder: Path, name: str = "program") -> Path:
    from opgen.spec.mlx.mlx_headers import find_mlx_include

    include = find_mlx_include()
    compiler = shutil.which(os.environ.get("CXX", "c++"))
    if include is None or compiler is None:
        pytest.skip("compiling the runtime needs MLX's headers and a C++ compiler")
    (folder / f"{name}.cpp").write_text(source)
    library = Path(include).parent / "lib"
    program = folder / name
    built = subprocess.run(
        [
            compiler, "-std=c++20", "-O0", f"-I{include}", f"-I{TEMPLATES}",
            str(folder / f"{name}.cpp"), "-o", str(program),
            f"-L{library}", "-lmlx", f"-Wl,-rpath,{library}",
        ],
        capture_output=True,
        text=True,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr[-4000:]
    return program
