"""`opgen autograd` and `opgen python` write as `opgen aten` does: the output list, dry runs,
reruns and workers.

Both take `NATIVE TAGS OUT AUTOGRAD_DIR` (torch's packaged spec and autograd
directory here). `-o FILE` writes the list of the files a build compiles (a
CMake `set()` named after FILE's stem, the Everything files left out) and
`--dry-run` writes that list and nothing else; a rerun over unchanged input
touches no file, and the bytes do not depend on the number of workers.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path, PurePosixPath

import pytest

from opgen.cli import main

from .aten_trees import Tree, read_tree
from .autograd_trees import AutogradInputs

COMMANDS = ("autograd", "python")


def command_line(command: str, inputs: AutogradInputs, out: Path, *flags: str) -> list[str]:
    return [command, inputs.native_yaml, inputs.tags_yaml, str(out), inputs.autograd_dir, *flags]


def _stamps(root: Path) -> dict[Path, int]:
    return {p: p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}


def _compiled(tree: Tree) -> list[str]:
    """The files of a tree a build compiles: all but the Everything files."""
    return [p for p in tree.files if not PurePosixPath(p).stem.endswith("Everything")]


@pytest.fixture
def upstream_tree(
    request: pytest.FixtureRequest, torchgen_autograd_trees: Callable[[str], Tree]
) -> Callable[[str], Tree]:
    def tree(command: str) -> Tree:
        if command == "autograd":
            return torchgen_autograd_trees("default")
        found: Tree = request.getfixturevalue("torchgen_python")
        return found

    return tree


@pytest.mark.parametrize("command", COMMANDS)
def test_dry_run_writes_only_the_output_list(
    command: str,
    autograd_inputs: AutogradInputs,
    upstream_tree: Callable[[str], Tree],
    tmp_path: Path,
) -> None:
    out, listing = tmp_path / "out", tmp_path / "deps" / f"{command}_generated.cmake"
    assert main(command_line(command, autograd_inputs, out, "--dry-run", "-o", str(listing))) == 0
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == [
        "deps",
        f"deps/{command}_generated.cmake",
    ]
    compiled = sorted(tmp_path / path for path in _compiled(upstream_tree(command)))
    assert listing.read_text() == "\n".join(
        ["set(", f"{command}_generated", *(f'    "{p.as_posix()}"' for p in compiled), ")"]
    )


@pytest.mark.parametrize("command", COMMANDS)
def test_the_output_list_does_not_depend_on_a_dry_run(
    command: str, autograd_inputs: AutogradInputs, tmp_path: Path
) -> None:
    dry, full, out = tmp_path / "dry.cmake", tmp_path / "full.cmake", tmp_path / "out"
    assert main(command_line(command, autograd_inputs, out, "--dry-run", "-o", str(dry))) == 0
    assert main(command_line(command, autograd_inputs, out, "-o", str(full))) == 0
    assert dry.read_text().replace("set(\ndry\n", "set(\nfull\n", 1) == full.read_text()


@pytest.mark.parametrize("command", COMMANDS)
def test_rerun_touches_nothing_and_workers_do_not_change_the_bytes(
    command: str, autograd_inputs: AutogradInputs, tmp_path: Path
) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    listing = str(one / f"{command}.cmake")
    assert main(command_line(command, autograd_inputs, one / "out", "-j", "1", "-o", listing)) == 0
    assert main(command_line(command, autograd_inputs, two / "out", "-j", "2")) == 0
    assert read_tree(one / "out").files == read_tree(two / "out").files
    before = _stamps(one)
    assert main(command_line(command, autograd_inputs, one / "out", "-j", "2", "-o", listing)) == 0
    assert _stamps(one) == before
