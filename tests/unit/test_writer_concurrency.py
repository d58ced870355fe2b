"""opgen.writer when runs meet: several writing one tree at once, and the leftovers of a
killed one. Expected trees are inline and exact, hidden entries included."""

from __future__ import annotations

import multiprocessing
import multiprocessing.synchronize
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from opgen.output import OutputError, OutputSet
from opgen.writer import _NewTrees, _stage_files, write_files

Listing = dict[str, str | None]  # relative path -> a file's text, None for a directory


def listing(root: Path) -> Listing:
    """Every entry under `root`, hidden ones and empty directories too."""
    return {
        p.relative_to(root).as_posix(): p.read_text() if p.is_file() else None
        for p in sorted(root.rglob("*"))
    }


def dead_pid() -> int:
    """The pid of a process that has ended (and been waited for)."""
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def meanwhile(action: Callable[[], None], text: str) -> Callable[[], str]:
    """A render that does `action` first: another run, between planning and moving in."""

    def render() -> str:
        action()
        return text

    return render


# --- a directory another run created meanwhile --------------------------------------------


def test_a_new_directory_that_appeared_meanwhile_gets_the_files_merged_in(tmp_path: Path) -> None:
    def other_run() -> None:
        (tmp_path / "out").mkdir()
        (tmp_path / "out/theirs.h").write_text("T")

    out = OutputSet(tmp_path / "out")
    out.add("a.h", meanwhile(other_run, "A"))
    out.add("b.h", "B")
    report = write_files([out])
    assert listing(tmp_path) == {"out": None, "out/a.h": "A", "out/b.h": "B", "out/theirs.h": "T"}
    assert report.changed == (tmp_path / "out/a.h", tmp_path / "out/b.h")


def test_a_file_another_run_wrote_with_the_same_bytes_keeps_its_mtime(tmp_path: Path) -> None:
    def other_run() -> None:
        (tmp_path / "out").mkdir()
        (tmp_path / "out/a.h").write_text("A")
        os.utime(tmp_path / "out/a.h", ns=(10**9, 10**9))

    out = OutputSet(tmp_path / "out")
    out.add("a.h", meanwhile(other_run, "A"))
    write_files([out])
    assert listing(tmp_path) == {"out": None, "out/a.h": "A"}
    assert (tmp_path / "out/a.h").stat().st_mtime_ns == 10**9


def test_a_file_another_run_wrote_with_other_bytes_is_replaced(tmp_path: Path) -> None:
    """As if this run had come second: its bytes win."""

    def other_run() -> None:
        (tmp_path / "out").mkdir()
        (tmp_path / "out/a.h").write_text("theirs")

    out = OutputSet(tmp_path / "out")
    out.add("a.h", meanwhile(other_run, "ours"))
    write_files([out])
    assert listing(tmp_path) == {"out": None, "out/a.h": "ours"}


def test_nested_new_directories_merge_at_every_level(tmp_path: Path) -> None:
    def other_run() -> None:
        (tmp_path / "out/ops").mkdir(parents=True)
        (tmp_path / "out/ops/theirs.h").write_text("T")
        (tmp_path / "out/ops/same.h").write_text("S")
        (tmp_path / "out/empty").mkdir()  # replaced by ours (Linux), or merged into

    out = OutputSet(tmp_path / "out")
    out.add("ops/same.h", meanwhile(other_run, "S"))
    out.add("ops/deep/x.h", "X")
    out.add("empty/e.h", "E")
    out.add("core/c.h", "C")
    out.add("top.h", "top")
    write_files([out])
    assert listing(tmp_path) == {
        "out": None,
        "out/core": None,
        "out/core/c.h": "C",
        "out/empty": None,
        "out/empty/e.h": "E",
        "out/ops": None,
        "out/ops/deep": None,
        "out/ops/deep/x.h": "X",
        "out/ops/same.h": "S",
        "out/ops/theirs.h": "T",
        "out/top.h": "top",
    }


def test_an_empty_directory_made_meanwhile_is_fine(tmp_path: Path) -> None:
    out = OutputSet(tmp_path / "out")
    out.add("a.h", meanwhile(lambda: (tmp_path / "out").mkdir(), "A"))
    write_files([out])
    assert listing(tmp_path) == {"out": None, "out/a.h": "A"}


@pytest.mark.parametrize("where", ["out", "out/ops"])
def test_a_file_where_a_new_directory_goes_is_an_error_and_leaves_no_temporary(
    tmp_path: Path, where: str
) -> None:
    def other_run() -> None:
        (tmp_path / where).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / where).write_text("a file")

    out = OutputSet(tmp_path / "out")
    out.add("ops/a.h", meanwhile(other_run, "A"))
    out.add("b.h", "B")
    with pytest.raises(NotADirectoryError):
        write_files([out])
    assert not [name for name in listing(tmp_path) if name.endswith(".tmp")]


# --- leftovers of killed runs -----------------------------------------------------------


def test_temporaries_of_dead_runs_are_removed_where_the_run_writes(tmp_path: Path) -> None:
    dead, alive = dead_pid(), os.getppid()
    out = tmp_path / "out"
    (out / "ops").mkdir(parents=True)
    (out / "ops" / "x.h").write_text("X")
    leftovers = [
        f"out/.a.h.{dead}-{dead + 1}-7.tmp",  # a file a killed run's worker staged
        f"out/.new.{dead}-1.tmp/deep/n.h",  # a directory it was building
        f"out/.a.h.{dead}-2.tmp",  # the name of opgen before owners were named
        f".out.{dead}-1.tmp/a.h",  # a killed merge, beside the root
    ]
    kept = [
        f"out/.a.h.{alive}-{alive}-1.tmp",  # a running run's
        f"out/.new.{alive}-1.tmp/n.h",
        f"out/.a.h.{os.getpid()}-{os.getpid()}-9.tmp",  # never this run's own
        f"out/.a.h.{dead}.tmp",  # not a name of ours
        f"out/.a.h.{dead}-1-2-3.tmp",
        f"out/a.h.{dead}-1.tmp",
        f"elsewhere/.a.h.{dead}-1.tmp",  # not where this run writes
    ]
    for name in leftovers + kept:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("left")
    written = OutputSet(out)
    written.add("a.h", "A")
    write_files([written])
    directories = {"elsewhere", "out", "out/ops", f"out/.new.{alive}-1.tmp"}
    assert listing(tmp_path) == {
        **dict.fromkeys(directories),
        **dict.fromkeys(kept, "left"),
        "out/a.h": "A",
        "out/ops/x.h": "X",
    }


def test_a_dead_runs_temporary_tree_beside_a_new_root_is_removed(tmp_path: Path) -> None:
    dead = dead_pid()
    (tmp_path / f".out.{dead}-1.tmp/ops").mkdir(parents=True)
    (tmp_path / f".out.{dead}-1.tmp/ops/half.h").write_text("half")
    (tmp_path / f".aoti.{dead}-1.tmp").mkdir()
    out = OutputSet(tmp_path / "out")
    out.add("ops/a.h", "A")
    aoti = OutputSet(tmp_path / "aoti" / "generated")
    write_files([out, aoti], make_roots=True)
    assert listing(tmp_path) == {
        "aoti": None,
        "aoti/generated": None,
        "out": None,
        "out/ops": None,
        "out/ops/a.h": "A",
    }


def test_a_dead_runs_temporary_inside_the_root_above_the_written_directory_is_removed(
    tmp_path: Path,
) -> None:
    """Where a killed merge of `out/ops` leaves its remains."""
    dead = dead_pid()
    (tmp_path / f"out/.ops.{dead}-1.tmp").mkdir(parents=True)
    (tmp_path / "out/ops").mkdir()
    out = OutputSet(tmp_path / "out")
    out.add("ops/a.h", "A")
    write_files([out])
    assert listing(tmp_path) == {"out": None, "out/ops": None, "out/ops/a.h": "A"}


def test_a_worker_whose_run_was_killed_writes_nothing_more(tmp_path: Path) -> None:
    """A forked worker outlives a SIGKILLed parent; it must not write after the next run
    has cleaned up. Here this process plays a worker whose owner is dead."""
    out = OutputSet(tmp_path)
    out.add("a.h", "A")
    targets = {str(tmp_path / rel): entry for rel, entry in out.entries()}
    with pytest.raises(OutputError, match=r"the run that started this worker \(pid \d+\)"):
        _stage_files(list(targets), targets, _NewTrees.make([], os.getpid()), dead_pid())
    assert listing(tmp_path) == {}


# --- many runs at once ------------------------------------------------------------------

RUNS = 6


def outputs(root: Path, run: int) -> list[OutputSet]:
    """What run number `run` writes: some files its own, some every run writes alike."""
    main = OutputSet(root / "out")
    main.add("shared.h", "every run\n")
    main.add(f"own{run}.h", f"run {run}\n")
    main.add(f"ops/op{run}.h", f"op {run}\n")
    main.add("ops/common.h", "common\n")
    main.add(f"deep/{run % 2}/x/f.h", f"parity {run % 2}\n")
    for i in range(run * 5):
        main.add(f"many/{run}_{i}.h", f"{run} {i}\n" * i)
    side = OutputSet(root / "side" / f"r{run % 3}")  # a root some runs share
    side.add(f"s{run}.h", "S\n")
    return [main, side]


def write_when_released(root: Path, run: int, start: multiprocessing.synchronize.Event) -> None:
    start.wait()
    write_files(outputs(root, run), make_roots=True, jobs=1 + run % 2)


def test_many_runs_at_once_write_what_they_write_one_after_another(tmp_path: Path) -> None:
    for run in range(RUNS):
        write_files(outputs(tmp_path / "sequential", run), make_roots=True)
    expected = listing(tmp_path / "sequential")
    fork = multiprocessing.get_context("fork")
    for repetition in range(20):
        root = tmp_path / f"together{repetition}"
        root.mkdir()
        start = fork.Event()
        runs = [
            fork.Process(target=write_when_released, args=(root, r, start)) for r in range(RUNS)
        ]
        for process in runs:
            process.start()
        start.set()
        for process in runs:
            process.join()
        assert [process.exitcode for process in runs] == [0] * RUNS, f"repetition {repetition}"
        assert listing(root) == expected, f"repetition {repetition}"
