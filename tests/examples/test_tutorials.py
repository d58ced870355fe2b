"""The tutorials build what they say, with the commands they show.

docs/library-spec.md builds the PyTorch library `tinylib` and docs/commands/mlx.md the
MLX extension `tinymlx`, each from nothing, every file shown whole. A tutorial's file is
a fenced code block right after a line that holds only the file's path as bold code
(GitHub shows the path above the block):

    **`tinylib/setup.py`**

    ```python
    ...
    ```

The block's text is the file's whole text. Any other block is an excerpt, or commands,
or output, and is not written. Each test writes a tutorial's files into a temporary
directory, runs the commands the page shows, each checked to be on the page word for
word, in an environment set up as an activated virtual environment of this
interpreter's, and checks that the script prints what the page says it prints. pip
installs with two flags more than the page's command, `--no-deps --target DIR`, so that
the library lands in a directory of the test's, not in the environment (the script
then runs with DIR on PYTHONPATH). The builds take a minute or more each.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LIBRARY_SPEC = ROOT / "docs" / "library-spec.md"
MLX = ROOT / "docs" / "commands" / "mlx.md"

_FILE_MARK = re.compile(r"^\*\*`([^`]+)`\*\*$")
_FENCE = re.compile(r"^\s*(```+|~~~+)")

TORCH_FILES = {
    "tinylib/native_functions.yaml",
    "tinylib/derivatives.yaml",
    "tinylib/kernels.cpp",
    "tinylib/setup.py",
    "tinylib/pyproject.toml",
    "tinylib/demo.py",
    "tinylib/CMakeLists.txt",
}
TORCH_OUTPUT = "[2.5, 4.5, 6.5] [2.0, 2.0, 2.0]\nopcheck passed\n"
MLX_FILES = {
    "tinymlx/tinymlx.yaml",
    "tinymlx/kernels.cpp",
    "tinymlx/CMakeLists.txt",
    "tinymlx/setup.py",
    "tinymlx/pyproject.toml",
    "tinymlx/demo.py",
}
MLX_OUTPUT = "[2.5, 4.5, 6.5]\n[1.0, 8.0, 27.0]\n[3.0, 12.0, 27.0]\n[2.0, 2.0, 2.0]\n"


def tutorial_files(markdown: str) -> dict[str, str]:
    """Each file of the page (path to text): the fenced block after its bold path."""
    files: dict[str, str] = {}
    lines = markdown.splitlines()
    named: str | None = None
    index = 0
    while index < len(lines):
        line = lines[index]
        fence = _FENCE.match(line)
        if fence:
            body: list[str] = []
            index += 1
            while index < len(lines) and lines[index].strip() != fence.group(1):
                body.append(lines[index])
                index += 1
            if named is not None:
                files[named] = "".join(f"{text}\n" for text in body)
            named = None
        elif mark := _FILE_MARK.match(line.strip()):
            named = mark.group(1)
        elif line.strip():
            named = None
        index += 1
    return files


def test_a_file_is_the_block_after_its_bold_path() -> None:
    page = (
        "Intro.\n\n**`lib/a.yaml`**\n\n```yaml\n- x: 1\n\n- y: 2\n```\n\n"
        "An excerpt:\n\n```yaml\n- z: 3\n```\n\n"
        "**`lib/b.py`**\nthen prose, so no file\n\n```python\nb = 1\n```\n\n"
        "1. a list:\n\n   **`lib/c.txt`**\n\n   ```\n   c\n   ```\n"
    )
    assert tutorial_files(page) == {"lib/a.yaml": "- x: 1\n\n- y: 2\n", "lib/c.txt": "   c\n"}


def test_the_tutorials_show_every_file() -> None:
    assert set(tutorial_files(LIBRARY_SPEC.read_text(encoding="utf-8"))) == TORCH_FILES
    assert set(tutorial_files(MLX.read_text(encoding="utf-8"))) == MLX_FILES


# -- building them ---------------------------------------------------------------------------


def write_tutorial(page: Path, directory: Path) -> str:
    """Write the page's files under `directory`; the page's text."""
    text = page.read_text(encoding="utf-8")
    for name, content in tutorial_files(text).items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    return text


def activated(extra: Mapping[str, str]) -> dict[str, str]:
    """The environment of a shell in which this interpreter's virtual environment is
    activated (its `python`, `pip` and `opgen` first on PATH), with `extra`."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONHOME", "PYTHONPATH")}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    if sys.prefix != sys.base_prefix:
        env["VIRTUAL_ENV"] = sys.prefix
    return {**env, **extra}


def run_shown(page: str, line: str, cwd: Path, extra: Sequence[str] = (), **env: str) -> str:
    """Run the command `line`, which the page must show, in `cwd` (leading `NAME=value`
    words set the environment, as a shell's do), with `extra` arguments; its output."""
    assert line in page, f"the page does not show `{line}`"
    words = shlex.split(line)
    while "=" in words[0]:
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    done = subprocess.run(
        [*words, *extra], cwd=cwd, env=activated(env), capture_output=True, text=True
    )
    if done.returncode != 0:
        pytest.fail(f"`{line}` failed ({done.returncode}):\n{done.stdout[-6000:]}\n{done.stderr}")
    return done.stdout


def shows_output(page: str, output: str) -> bool:
    return f"```\n{output}```\n" in page


def test_the_torch_library_tutorial_builds_with_pip(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    page = write_tutorial(LIBRARY_SPEC, tmp_path)
    site = tmp_path / "site"
    install = "pip install --no-build-isolation ./tinylib"
    run_shown(page, install, tmp_path, ["--no-deps", "--target", str(site)])
    assert sorted(p.name for p in site.iterdir()) == ["tinylib", "tinylib-0.1.0.dist-info"]
    assert sorted(p.name for p in (site / "tinylib").iterdir() if p.name != "__pycache__") == [
        f"_C{sysconfig_suffix()}",
        "__init__.py",
        "__init__.pyi",
        "py.typed",
    ]
    output = run_shown(page, "python tinylib/demo.py", tmp_path, PYTHONPATH=str(site))
    assert output == TORCH_OUTPUT
    assert shows_output(page, TORCH_OUTPUT)


def test_the_torch_library_tutorial_builds_with_cmake(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    page = write_tutorial(LIBRARY_SPEC, tmp_path)
    project = tmp_path / "tinylib"
    run_shown(page, "opgen torch-library native_functions.yaml -o build/generated", project)
    run_shown(page, "cmake -S . -B build/cmake", project)
    run_shown(page, "cmake --build build/cmake", project)
    assert (project / "build" / "generated" / "tinylib" / "_C.so").is_file()
    output = run_shown(page, "PYTHONPATH=build/generated python demo.py", project)
    assert output == TORCH_OUTPUT


def test_the_mlx_tutorial_builds_with_pip(tmp_path: Path) -> None:
    pytest.importorskip("mlx.core")
    page = write_tutorial(MLX, tmp_path)
    site = tmp_path / "site"
    install = "pip install --no-build-isolation ./tinymlx"
    run_shown(page, install, tmp_path, ["--no-deps", "--target", str(site)])
    assert sorted(p.name for p in site.iterdir()) == sorted(
        ["tinymlx-0.1.0.dist-info", "tinymlx.pyi", f"tinymlx{sysconfig_suffix()}"]
    )
    output = run_shown(page, "python tinymlx/demo.py", tmp_path, PYTHONPATH=str(site))
    assert output == MLX_OUTPUT
    assert shows_output(page, MLX_OUTPUT)


def test_the_mlx_tutorial_builds_with_cmake(tmp_path: Path) -> None:
    pytest.importorskip("mlx.core")
    page = write_tutorial(MLX, tmp_path)
    project = tmp_path / "tinymlx"
    run_shown(page, "opgen mlx tinymlx.yaml -o build/generated", project)
    run_shown(page, "cmake -S . -B build/cmake -DCMAKE_BUILD_TYPE=Release", project)
    run_shown(page, "cmake --build build/cmake", project)
    output = run_shown(page, "PYTHONPATH=build/cmake python demo.py", project)
    assert output == MLX_OUTPUT


def sysconfig_suffix() -> str:
    import sysconfig

    return str(sysconfig.get_config_var("EXT_SUFFIX"))
