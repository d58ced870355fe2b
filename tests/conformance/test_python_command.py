"""`opgen python` end to end: whole trees, the output list, dry runs, reruns and workers.

The command takes the inputs of upstream's `gen_autograd_python(NATIVE, TAGS,
OUT, AUTOGRAD_DIR)` and must write the same tree: on torch's packaged spec,
and on the trimmed autograd variation (its deprecated.yaml cut to the
functions it keeps). Its own options behave as `opgen autograd`'s do: `-o
FILE` writes the list of the files a build compiles (a CMake `set()` named
after FILE's stem, the Everything files left out), `--dry-run` writes that
list and nothing else, a rerun over unchanged input touches no file, and the
bytes do not depend on the number of workers.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path, PurePosixPath

from opgen.cli import main

from .aten_trees import Tree, read_tree
from .autograd_trees import AutogradInputs
from .python_trees import opgen_python_tree
from .test_aten_tree import first_difference


def _command(inputs: AutogradInputs, out: Path, *flags: str) -> list[str]:
    return ["python", inputs.native_yaml, inputs.tags_yaml, str(out), inputs.autograd_dir, *flags]


def _stamps(root: Path) -> dict[Path, int]:
    return {p: p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}


def _compiled(tree: Tree) -> list[str]:
    """The files of a tree a build compiles: all but the Everything files."""
    return [p for p in tree.files if not PurePosixPath(p).stem.endswith("Everything")]


def test_same_tree_as_torchgen(
    autograd_inputs: AutogradInputs, torchgen_python: Tree, tmp_path: Path
) -> None:
    ours = opgen_python_tree(autograd_inputs, tmp_path)
    assert ours.files == torchgen_python.files, first_difference(torchgen_python, ours)


def test_same_tree_as_torchgen_on_the_trimmed_variation(
    torchgen_python_variations: Callable[[str, bool], tuple[AutogradInputs, Tree]],
    tmp_path: Path,
) -> None:
    inputs, theirs = torchgen_python_variations("trimmed", False)
    ours = opgen_python_tree(inputs, tmp_path)
    assert ours.files == theirs.files, first_difference(theirs, ours)


def test_dry_run_writes_only_the_output_list(
    autograd_inputs: AutogradInputs, torchgen_python: Tree, tmp_path: Path
) -> None:
    out, listing = tmp_path / "out", tmp_path / "deps" / "python_generated.cmake"
    assert main(_command(autograd_inputs, out, "--dry-run", "-o", str(listing))) == 0
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == [
        "deps",
        "deps/python_generated.cmake",
    ]
    compiled = sorted(tmp_path / path for path in _compiled(torchgen_python))
    assert listing.read_text() == "\n".join(
        ["set(", "python_generated", *(f'    "{p.as_posix()}"' for p in compiled), ")"]
    )


def test_the_output_list_does_not_depend_on_a_dry_run(
    autograd_inputs: AutogradInputs, tmp_path: Path
) -> None:
    dry, full = tmp_path / "dry.cmake", tmp_path / "full.cmake"
    assert main(_command(autograd_inputs, tmp_path / "out", "--dry-run", "-o", str(dry))) == 0
    assert main(_command(autograd_inputs, tmp_path / "out", "-o", str(full))) == 0
    assert dry.read_text().replace("set(\ndry\n", "set(\nfull\n", 1) == full.read_text()


def test_rerun_touches_nothing_and_workers_do_not_change_the_bytes(
    autograd_inputs: AutogradInputs, tmp_path: Path
) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    listing = str(one / "python.cmake")
    assert main(_command(autograd_inputs, one / "out", "-j", "1", "-o", listing)) == 0
    assert main(_command(autograd_inputs, two / "out", "-j", "2")) == 0
    assert read_tree(one / "out").files == read_tree(two / "out").files
    before = _stamps(one)
    assert main(_command(autograd_inputs, one / "out", "-j", "2", "-o", listing)) == 0
    assert _stamps(one) == before
