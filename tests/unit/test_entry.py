"""`python -m opgen` as a process: the exit status and every line of output arrive.

The entry point leaves with `os._exit` (no interpreter teardown), so these
check that it flushes what it printed first, into a pipe as into a terminal.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from opgen.targets.registry import COMMANDS
from opgen.tooling.spec_files import bundled_example


def opgen(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "opgen", *argv], capture_output=True, text=True, check=False
    )


def test_success_prints_everything_and_exits_0() -> None:
    done = opgen("dump", bundled_example().native)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) > 1 and all(line.startswith('{"name": ') for line in lines)
    assert done.stdout.endswith("}\n")


def test_bad_input_prints_the_diagnostic_and_exits_1(tmp_path: Path) -> None:
    missing = tmp_path / "missing.yaml"
    done = opgen("check", str(missing))
    assert (done.returncode, done.stdout, done.stderr) == (
        1,
        "",
        f"{missing}:1: error: no such file\n",
    )


def test_bad_usage_exits_2() -> None:
    done = opgen("aten", "--jobs", "0")
    assert done.returncode == 2
    assert "expected a positive integer, not '0'" in done.stderr


def test_an_unknown_command_is_a_usage_error_that_suggests_the_nearest() -> None:
    done = opgen("atne")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "usage: opgen [-h] [--version] COMMAND ...\n"
        "opgen: error: argument COMMAND: invalid choice: 'atne'; did you mean 'aten'?\n"
    )


def test_an_unknown_command_near_none_lists_the_commands() -> None:
    done = opgen("xyzzy")
    assert done.returncode == 2
    listed = ", ".join(sorted(COMMANDS))
    assert done.stderr.endswith(
        f"opgen: error: argument COMMAND: invalid choice: 'xyzzy'; expected one of {listed}\n"
    )


def test_a_command_parses_its_own_arguments_alone() -> None:
    """Only the named command's parser is built; its help and errors are unchanged."""
    done = opgen("aten", "--help")
    assert done.returncode == 0
    assert done.stdout.startswith("usage: opgen aten [-h]")
    done = opgen("aten", "--no-such-flag")
    assert done.returncode == 2
    assert done.stderr.startswith("usage: opgen aten [-h]")
    assert done.stderr.endswith("opgen aten: error: unrecognized arguments: --no-such-flag\n")


def test_help_fits_the_terminal_as_argparse_sizes_it_without_importing_shutil() -> None:
    code = (
        "import argparse, os, sys\n"
        "from opgen.cli import build_parser\n"
        "ours = build_parser('check').format_help()\n"
        "assert 'shutil' not in sys.modules\n"
        "import shutil\n"
        "parser = build_parser('check')\n"
        "parser.formatter_class = argparse.HelpFormatter\n"
        "print(ours == parser.format_help())\n"
    )
    for columns in ("60", "100", "", "junk"):
        env = {**os.environ, "COLUMNS": columns}
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
        )
        assert done.stdout == "True\n", (columns, done.stderr)
