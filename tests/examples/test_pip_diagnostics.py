"""A mistake in a library's spec, built with `pip install`, shows in pip's output where it
is: opgen's diagnostic (`file:line:col: error: ...`, the line, the caret) and one line
saying which step failed, with no traceback, with and without `pip -v`.

Each test copies an example (or the tutorial of docs/library-spec.md), breaks one type
in its spec, and builds it as its page says, `pip install --no-build-isolation`, into a
directory of the test's (`--no-deps --target`). opgen fails before anything is compiled,
so each build takes a second or two: the PyTorch example's setup.py runs opgen when pip
reads it (pip's "Preparing metadata"), the MLX example's when its extensions are built.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from tests.examples.test_tutorials import LIBRARY_SPEC, write_tutorial

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
UNBUILT = shutil.ignore_patterns("build", "*.egg-info", "__pycache__")


def pip_install(project: Path, *flags: str) -> str:
    """pip's output (both streams) of a failed `pip install --no-build-isolation PROJECT`."""
    site = project.parent / "site"
    command = [sys.executable, "-m", "pip", "install", "--no-build-isolation", *flags]
    command += ["--no-deps", "--target", str(site), str(project)]
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert done.returncode != 0, done.stdout
    assert "Traceback" not in done.stdout
    return done.stdout


def shows(output: str, lines: Sequence[str]) -> bool:
    """Whether `lines` appear one after another in `output`, each behind the same
    indentation (pip indents what the build wrote)."""
    got = output.splitlines()
    for start, line in enumerate(got):
        indent = line[: max(0, len(line) - len(lines[0]))]
        if not indent.strip() and got[start : start + len(lines)] == [indent + e for e in lines]:
            return True
    return False


def broken_copy(example: str, spec: str, line: str, mistake: str, tmp_path: Path) -> int:
    """Copy the example to tmp_path/project with `line` of `spec` turned into `mistake`;
    the line's number."""
    project = tmp_path / "project"
    shutil.copytree(EXAMPLES / example, project, ignore=UNBUILT)
    lines = (project / spec).read_text(encoding="utf-8").splitlines(keepends=True)
    number = lines.index(line + "\n")
    lines[number] = mistake + "\n"
    (project / spec).write_text("".join(lines), encoding="utf-8")
    return number + 1


@pytest.mark.parametrize("verbose", [(), ("-v",)], ids=["quiet", "verbose"])
def test_the_torch_example_shows_a_spec_error(tmp_path: Path, verbose: tuple[str, ...]) -> None:
    pytest.importorskip("torch")
    line = "- func: mylib::rms_norm(Tensor x, Tensor weight, float eps=1e-06) -> Tensor"
    mistake = line.replace("(Tensor x", "(Tensr x")
    number = broken_copy("torch_library", "native_functions.yaml", line, mistake, tmp_path)
    output = pip_install(tmp_path / "project", *verbose)
    assert shows(
        output,
        [
            f"native_functions.yaml:{number}:25: error: unknown type 'Tensr'; did you mean "
            "'Tensor'?",
            f"  {mistake}",
            "                          ^~~~~",
            "error: opgen torch-library native_functions.yaml -o build/generated failed: "
            "bad input, located above (exit status 1)",
        ],
    ), output


@pytest.mark.parametrize("verbose", [(), ("-v",)], ids=["quiet", "verbose"])
def test_the_mlx_example_shows_a_spec_error(tmp_path: Path, verbose: tuple[str, ...]) -> None:
    pytest.importorskip("mlx.core")
    line = "- func: mlxlib::scaled_add(Tensor a, Tensor b, *, float alpha=1.0) -> Tensor"
    mistake = line.replace("Tensor b", "Tensr b")
    number = broken_copy("mlx_library", "ops.yaml", line, mistake, tmp_path)
    output = pip_install(tmp_path / "project", *verbose)
    generated = tmp_path / "project" / "build" / f"temp.{build_platform()}" / "generated"
    assert shows(
        output,
        [
            f"ops.yaml:{number}:38: error: unknown type 'Tensr'; did you mean 'Tensor'? (an MLX "
            "operator's types are Tensor, Tensor?, Tensor[], int, float, bool, str, int?, "
            "float?, bool?, int[], int[]?, ScalarType and ScalarType?)",
            f"  {mistake}",
            "                                       ^~~~~",
            f"error: opgen mlx ops.yaml -o {generated} failed: bad input, located above "
            "(exit status 1)",
        ],
    ), output


def test_the_tutorial_shows_what_pip_shows(tmp_path: Path) -> None:
    """The failed build docs/library-spec.md shows is the one pip shows."""
    pytest.importorskip("torch")
    page = write_tutorial(LIBRARY_SPEC, tmp_path)
    spec = tmp_path / "tinylib" / "native_functions.yaml"
    spec.write_text(spec.read_text().replace("float scale", "flaot scale"), encoding="utf-8")
    output = pip_install(tmp_path / "tinylib")
    [shown] = [block for block in page.split("```") if "error: unknown type 'flaot'" in block]
    assert shows(output, shown.strip("\n").splitlines()), output


def build_platform() -> str:
    """The part of setuptools' build directories' names that names the platform."""
    import sysconfig

    return f"{sysconfig.get_platform()}-{sys.implementation.cache_tag}"
