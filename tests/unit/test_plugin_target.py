"""Commands from another package: installed with pip, found through `opgen.targets`, run.

The plugin below is a whole package: a `pyproject.toml` that registers its commands in
the `opgen.targets` entry-point group, the target of docs/targets.md (taken from the
page as it is written), which writes one file per operator of a spec through opgen's
own model, emitters and writer, and a tool that counts a spec's operators. pip installs
it into a directory of its own, which the `opgen` processes find on PYTHONPATH.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PYPROJECT = """\
[build-system]
requires = ["setuptools"]
build-backend = "setuptools.build_meta"

[project]
name = "opgen-hello-target"
version = "1.0"

[project.entry-points."opgen.targets"]
hello = "opgen_hello:TARGET"
aten = "opgen_hello:TARGET"
broken = "opgen_hello_missing:TARGET"
explodes = "opgen_hello_explodes:TARGET"
count = "opgen_hello_tool:TOOL"
old = "opgen_hello_old:TARGET"

[tool.setuptools]
py-modules = ["opgen_hello", "opgen_hello_explodes", "opgen_hello_tool", "opgen_hello_old"]
"""

DOCS = Path(__file__).resolve().parents[2] / "docs" / "targets.md"


def documented_module() -> str:
    """The example module of docs/targets.md, as it is written there."""
    text = DOCS.read_text()
    start = text.index("```python\n# opgen_hello.py\n") + len("```python\n")
    return text[start : text.index("```\n", start)]


MODULE = documented_module()

# A tool of another package: it counts a spec's operators.
TOOL_MODULE = """\
import argparse

from opgen.spec import load_spec
from opgen.targets.contract import ToolCommand


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("spec", metavar="SPEC")


def run(args: argparse.Namespace, out, err) -> int:
    out.write(f"{len(load_spec(args.spec, None).functions)} operators\\n")
    return 0


TOOL = ToolCommand(
    name="count",
    help="count the operators of a spec",
    description="Count the operators of SPEC.",
    add_arguments=add_arguments,
    run=run,
)
"""

# A target of an older shape: `generate(options)` instead of `read` and `emit`.
OLD_MODULE = """\
class OldTarget:
    name = "old"
    help = "a target that generates in one step"
    description = "Generate in one step."

    def add_arguments(self, parser):
        pass

    def options(self, args):
        return args

    def generate(self, options):
        raise AssertionError("never called")


TARGET = OldTarget()
"""

SPEC = """\
- func: scale(Tensor self, float factor) -> Tensor
- func: shift(Tensor self, Scalar by=1) -> Tensor
"""


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory into which pip installed the plugin (its module and its metadata)."""
    root = tmp_path_factory.mktemp("plugin")
    (root / "src").mkdir()
    (root / "src" / "pyproject.toml").write_text(PYPROJECT)
    (root / "src" / "opgen_hello.py").write_text(MODULE)
    (root / "src" / "opgen_hello_explodes.py").write_text('raise RuntimeError("not today")\n')
    (root / "src" / "opgen_hello_tool.py").write_text(TOOL_MODULE)
    (root / "src" / "opgen_hello_old.py").write_text(OLD_MODULE)
    site = root / "site"
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation"]
    subprocess.run(
        [*pip, "--target", str(site), str(root / "src")],
        check=True,
        capture_output=True,
    )
    return site


def opgen(plugin_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(plugin_path)}
    return subprocess.run(
        [sys.executable, "-m", "opgen", *argv], capture_output=True, text=True, env=env
    )


def test_the_plugin_target_runs_as_a_command(plugin_path: Path, tmp_path: Path) -> None:
    (tmp_path / "ops.yaml").write_text(SPEC)
    done = opgen(plugin_path, "hello", str(tmp_path / "ops.yaml"), "-o", str(tmp_path / "out"))
    assert (done.returncode, done.stdout, done.stderr) == (0, "greeted 2\n", "")
    out = tmp_path / "out" / "hello"
    assert sorted(p.name for p in out.iterdir()) == ["scale.txt", "shift.txt"]
    assert (out / "shift.txt").read_text() == "hello, shift(Tensor self, Scalar by=1) -> Tensor\n"


def test_the_plugin_target_gets_the_run_options(plugin_path: Path, tmp_path: Path) -> None:
    (tmp_path / "ops.yaml").write_text(SPEC)
    out = tmp_path / "out"
    done = opgen(plugin_path, "hello", str(tmp_path / "ops.yaml"), "-o", str(out), "--dry-run")
    assert (done.returncode, done.stdout) == (0, "greeted 2\n")
    assert not out.exists()


def test_bad_input_to_a_plugin_is_a_located_error(plugin_path: Path, tmp_path: Path) -> None:
    (tmp_path / "ops.yaml").write_text("- func: scale(Tensr self) -> Tensor\n")
    done = opgen(plugin_path, "hello", str(tmp_path / "ops.yaml"), "-o", str(tmp_path / "out"))
    assert done.returncode == 1
    assert done.stderr.startswith(f"{tmp_path / 'ops.yaml'}:1:15: error: ")


def test_help_lists_plugins_after_the_builtin_commands(plugin_path: Path) -> None:
    done = opgen(plugin_path, "--help")
    assert done.returncode == 0
    # A command's line is indented by four spaces; its help's continuation lines, by more.
    lines = done.stdout.splitlines()
    commands = [line.split() for line in lines if line.startswith("    ") and line[4] != " "]
    names = [words[0] for words in commands]
    assert names[-6:] == ["coverage", "broken", "count", "explodes", "hello", "old"]
    assert commands[-2][1:3] == ["write", "hello/<operator>.txt"]
    assert commands[-3][1:4] == ["(cannot", "be", "loaded:"]
    assert commands[-4][1:3] == ["count", "the"]
    assert commands[-1][1:4] == ["(cannot", "be", "loaded:"]


def test_a_builtin_name_is_never_taken_by_a_plugin(plugin_path: Path) -> None:
    done = opgen(plugin_path, "aten", "--help")
    assert done.returncode == 0
    assert "--per-operator-headers" in done.stdout


def test_a_plugin_that_cannot_be_loaded_is_a_usage_error(plugin_path: Path) -> None:
    done = opgen(plugin_path, "broken")
    assert done.returncode == 2
    assert done.stderr == (
        "opgen broken: error: the target cannot be loaded: opgen_hello_missing:TARGET: "
        "No module named 'opgen_hello_missing'\n"
    )


def test_a_plugin_that_fails_on_import_is_a_usage_error(plugin_path: Path) -> None:
    done = opgen(plugin_path, "explodes")
    assert (done.returncode, done.stderr) == (
        2,
        "opgen explodes: error: the target cannot be loaded: "
        "opgen_hello_explodes:TARGET: not today\n",
    )


def test_a_plugin_tool_runs_as_a_command(plugin_path: Path, tmp_path: Path) -> None:
    (tmp_path / "ops.yaml").write_text(SPEC)
    done = opgen(plugin_path, "count", str(tmp_path / "ops.yaml"))
    assert (done.returncode, done.stdout, done.stderr) == (0, "2 operators\n", "")


def test_a_target_without_read_and_emit_is_a_usage_error(plugin_path: Path) -> None:
    done = opgen(plugin_path, "old")
    assert (done.returncode, done.stderr) == (
        2,
        "opgen old: error: the target cannot be loaded: opgen_hello_old:TARGET is not a "
        "command: it has no read, emit\n",
    )
