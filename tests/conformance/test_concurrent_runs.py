"""`opgen aten` runs into one output tree at once, and after a killed run, as builds do.

On a clean build Ninja starts `opgen aten --generate headers`, `--generate sources`
and `--generate declarations_yaml` together, all writing into one fresh tree (the
install dir and the AOTInductor shim dir, here both under the runs' working
directory, as with the default flags). Each test starts the three `python -m opgen`
processes at once, many times, and every time the tree must be the one the three
write one after another: the same paths (hidden ones too, so no temporary is left)
and the same bytes, with every run exiting 0. Most repetitions use the bundled
small spec (`opgen/examples`, with torch's templates beside it), as that is quick;
two use torch's full spec, and two more start `opgen generate-code` beside the three,
into the same `out`.

A run killed with SIGKILL half-way (the parent only, as the kernel's OOM killer
would; its forked workers stop by themselves) leaves hidden temporaries; the next
runs must remove them and leave exactly the tree of a clean build.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import opgen

GENERATE = ("headers", "sources", "declarations_yaml")
COMMON = ("--per-operator-headers",)
EXAMPLES = Path(opgen.__file__).parent / "examples"

Listing = dict[str, bytes | None]  # relative path -> a file's bytes, None for a directory


def start(source: Path, root: Path, *flags: str) -> subprocess.Popen[bytes]:
    """`opgen aten` with `flags` on the spec in `source`, writing under `root`."""
    return subprocess.Popen(
        [sys.executable, "-m", "opgen", "aten", "-s", str(source), "-d", "out", *COMMON, *flags],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def start_generate_code(source: Path, root: Path) -> subprocess.Popen[bytes]:
    """`opgen generate-code` on the spec in `source` (torchgen's packaged ATen, with
    `autograd/` beside it), writing `torch/...` under the same `out` as `opgen aten`."""
    native = source / "native"
    return subprocess.Popen(
        [
            *(sys.executable, "-m", "opgen", "generate-code", "--gen-dir", "out"),
            *("--native-functions-path", str(native / "native_functions.yaml")),
            *("--tags-path", str(native / "tags.yaml")),
        ],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def start_three(
    source: Path, root: Path, *, generate_code: bool = False
) -> list[subprocess.Popen[bytes]]:
    runs = [start(source, root, "--generate", generate) for generate in GENERATE]
    return [*runs, start_generate_code(source, root)] if generate_code else runs


def run_three_in_turn(source: Path, root: Path, *, generate_code: bool = False) -> None:
    for generate in GENERATE:
        finish([start(source, root, "--generate", generate)])
    if generate_code:
        finish([start_generate_code(source, root)])


def finish(runs: list[subprocess.Popen[bytes]]) -> None:
    errors = [run.communicate()[1].decode() for run in runs]
    statuses = [run.returncode for run in runs]
    assert statuses == [0] * len(runs), "\n".join(errors)


def listing(root: Path) -> Listing:
    """Every entry under `root`, hidden ones and empty directories too."""
    entries: Listing = {}
    for directory, subdirectories, files in os.walk(root):
        for name in subdirectories:
            entries[os.path.relpath(os.path.join(directory, name), root)] = None
        for name in files:
            path = os.path.join(directory, name)
            with open(path, "rb") as file:
                entries[os.path.relpath(path, root)] = file.read()
    return entries


def assert_same_tree(root: Path, expected: Listing, what: str) -> None:
    found = listing(root)
    temporaries = sorted(path for path in found if path.endswith(".tmp"))
    assert not temporaries, f"{what}: temporaries left: {temporaries[:5]}"
    missing, extra = sorted(expected.keys() - found), sorted(found.keys() - expected)
    assert not missing and not extra, f"{what}: missing {missing[:5]}, extra {extra[:5]}"
    differ = sorted(path for path in expected if found[path] != expected[path])
    assert not differ, f"{what}: files differ: {differ[:5]}"


def fresh(root: Path) -> Path:
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    return root


@pytest.fixture(scope="module")
def small_source(torchgen_aten_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled example spec laid out as an ATen source dir, with torch's templates."""
    source = tmp_path_factory.mktemp("small-spec")
    (source / "native").mkdir()
    for name in ("native_functions.yaml", "tags.yaml"):
        shutil.copyfile(EXAMPLES / name, source / "native" / name)
    (source / "templates").symlink_to(torchgen_aten_dir / "templates", target_is_directory=True)
    return source


@pytest.fixture(scope="module")
def sequential(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Path], Listing]:
    """`tree(source)`: the tree the three runs write one after another, each run once."""

    @functools.cache
    def tree(source: Path, generate_code: bool = False) -> Listing:
        root = tmp_path_factory.mktemp("sequential")
        run_three_in_turn(source, root, generate_code=generate_code)
        return listing(root)

    return tree


def test_three_runs_at_once_on_the_small_spec_write_the_sequential_tree(
    small_source: Path, sequential: Callable[[Path], Listing], tmp_path: Path
) -> None:
    expected = sequential(small_source)
    assert len(expected) > 100
    for repetition in range(20):
        root = fresh(tmp_path / f"together{repetition}")
        finish(start_three(small_source, root))
        assert_same_tree(root, expected, f"repetition {repetition}")


def test_three_runs_at_once_on_torchs_spec_write_the_sequential_tree(
    torchgen_aten_dir: Path, sequential: Callable[..., Listing], tmp_path: Path
) -> None:
    expected = sequential(torchgen_aten_dir)
    for repetition in range(2):
        root = fresh(tmp_path / f"together{repetition}")
        finish(start_three(torchgen_aten_dir, root))
        assert_same_tree(root, expected, f"repetition {repetition}")


def test_generate_code_beside_the_three_runs_writes_the_sequential_tree(
    torchgen_aten_dir: Path, sequential: Callable[..., Listing], tmp_path: Path
) -> None:
    """`opgen generate-code` writing `out/torch/...` while the three runs write `out/`."""
    expected = sequential(torchgen_aten_dir, True)
    assert any(path.startswith("out/torch/csrc/autograd/generated/") for path in expected)
    for repetition in range(2):
        root = fresh(tmp_path / f"together{repetition}")
        finish(start_three(torchgen_aten_dir, root, generate_code=True))
        assert_same_tree(root, expected, f"repetition {repetition}")


def kill_when(run: subprocess.Popen[bytes], ready: Callable[[], bool]) -> None:
    """SIGKILL `run` (not its workers) once `ready()`; fail if it ends first."""
    deadline = time.monotonic() + 120
    while not ready():
        assert run.poll() is None, "the run ended before it could be killed half-way"
        assert time.monotonic() < deadline, "the run never got half-way"
        time.sleep(0.005)
    os.kill(run.pid, signal.SIGKILL)
    run.communicate()
    assert run.returncode == -signal.SIGKILL


def names(directory: Path) -> list[str]:
    """What `directory` holds; nothing if it is gone (renamed into place, say)."""
    try:
        return os.listdir(directory)
    except FileNotFoundError:
        return []


def temporaries(directory: Path) -> list[str]:
    return [name for name in names(directory) if name.endswith(".tmp")]


def test_after_a_run_killed_while_building_a_new_tree_the_next_runs_leave_a_clean_tree(
    torchgen_aten_dir: Path, sequential: Callable[[Path], Listing], tmp_path: Path
) -> None:
    expected = sequential(torchgen_aten_dir)
    root = fresh(tmp_path / "killed")
    run = start(torchgen_aten_dir, root)  # everything

    def half_built() -> bool:  # the new tree holds some of the operators' headers
        return any(len(names(root / new / "ops")) > 1000 for new in temporaries(root))

    kill_when(run, half_built)
    assert any(name.startswith(".out.") for name in temporaries(root))
    finish(start_three(torchgen_aten_dir, root))
    assert_same_tree(root, expected, "after the killed run")


def test_after_a_run_killed_while_staging_into_an_existing_tree_the_next_runs_leave_it_clean(
    small_source: Path,
    torchgen_aten_dir: Path,
    sequential: Callable[[Path], Listing],
    tmp_path: Path,
) -> None:
    """The small spec's tree first, then torch's: the killed run stages its files
    beside their targets (`out/ops` exists), where the next runs must find them."""
    # A run removes nothing, so the small tree's files stay where torch's has none.
    expected = {**sequential(small_source), **sequential(torchgen_aten_dir)}
    root = fresh(tmp_path / "killed")
    run_three_in_turn(small_source, root)
    run = start(torchgen_aten_dir, root, "--generate", "headers")
    kill_when(run, lambda: len(temporaries(root / "out" / "ops")) > 500)
    assert temporaries(root / "out" / "ops")  # what the killed process itself staged
    finish(start_three(torchgen_aten_dir, root))
    assert_same_tree(root, expected, "after the killed run")
