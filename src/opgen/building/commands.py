"""Running opgen and CMake from a build, with their messages where the user sees them.

pip runs a build backend with its standard output and error sent to pip, and shows
what came through: as it comes with `pip -v`, and, without `-v`, all of it once the
build fails. So each command here writes both its streams to this process's
standard error, as it runs, never into a pipe that is read and dropped: opgen's
located diagnostics (`file:line:col: error: ...`, the line, a caret) and warnings
reach the user as they would from a terminal. A command that fails ends the build
with `BuildFailed`, a `SystemExit` whose message is one line naming the command and
what its exit status means; setuptools and pip print it as it is, with no traceback.
"""

from __future__ import annotations

import importlib.util
import shlex
import subprocess
import sys
from collections.abc import Sequence

# What opgen's exit statuses mean (`opgen.cli`).
_OPGEN_STATUS = {1: "bad input, located above", 2: "bad usage, described above"}


class BuildFailed(SystemExit):
    """A step of the build failed; the message is the one line that says which."""


def run_opgen(arguments: Sequence[str]) -> None:
    """`opgen ARGUMENTS` (in this interpreter), its messages on standard error."""
    status = _streamed([sys.executable, "-m", "opgen", *arguments])
    if status != 0:
        raise BuildFailed(f"error: {_shown(['opgen', *arguments])} failed: {_opgen_status(status)}")


def opgen_listing(arguments: Sequence[str]) -> list[str]:
    """The lines `opgen ARGUMENTS` prints on standard output: a `--list-files` or
    `--list-sources` run after `run_opgen` with the same arguments, whose warnings that
    run has shown already (they are shown again only if this one fails)."""
    done = subprocess.run(
        [sys.executable, "-m", "opgen", *arguments], capture_output=True, text=True
    )
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        status = _opgen_status(done.returncode)
        raise BuildFailed(f"error: {_shown(['opgen', *arguments])} failed: {status}")
    return done.stdout.split()


def run_command(command: Sequence[str], failure: str) -> None:
    """Run `command` (CMake, a compiler), its messages on standard error; `failure` is the
    error line if it fails, before the command and its exit status."""
    status = _streamed(command)
    if status != 0:
        raise BuildFailed(f"error: {failure} ({_shown(command)} exited with status {status})")


def require_wheel_support() -> None:
    """pip builds a wheel with setuptools' `bdist_wheel`, which setuptools has from 70.1
    on (before, the `wheel` package provides it); without build isolation the build uses
    the environment's setuptools, and an older one fails with `invalid command
    'bdist_wheel'`, which this says how to fix."""
    if not any(
        importlib.util.find_spec(name) for name in ("setuptools.command.bdist_wheel", "wheel")
    ):
        raise BuildFailed(
            "error: building a wheel needs setuptools >= 70.1 (or the wheel package) "
            "in the environment the build runs in: pip install -U setuptools"
        )


def _streamed(command: Sequence[str]) -> int:
    """Run `command` with both its streams on this process's standard error; its exit
    status. Where standard error is no file (a test's captured stream), the output is
    written there once the command ends."""
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        descriptor = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        sys.stderr.write(done.stdout)
        return done.returncode
    return subprocess.run(command, stdout=descriptor, stderr=descriptor).returncode


def _shown(command: Sequence[str]) -> str:
    return shlex.join(command)


def _opgen_status(status: int) -> str:
    meaning = _OPGEN_STATUS.get(status, "see the messages above")
    return f"{meaning} (exit status {status})"
