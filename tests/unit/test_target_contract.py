"""The command contract: docs/targets.md says what the code has, targets run from Python as
from the command line, and where `deliver` renders.

The tables of docs/targets.md (the members of `Target` and `Tool`, the fields of
`RunOptions`, `Generated` and `Emitted`, and opgen's commands) are read from the page and
held to the code: a field added to the contract, or a command to the registry, is added
to the page too.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from opgen.cli import main
from opgen.frozen import fields
from opgen.output import OutputSet
from opgen.targets import contract
from opgen.targets.contract import Generated, RunOptions, generate, is_target, rendering_jobs
from opgen.targets.emitters import Emitted
from opgen.targets.registry import COMMANDS, load_command, load_target

DOCS = Path(__file__).resolve().parents[2] / "docs" / "targets.md"
DATA = Path(__file__).resolve().parents[1] / "conformance" / "data"


def table(heading: str) -> list[list[str]]:
    """The rows of the first table under `## heading` of docs/targets.md, each cell's text
    without its backticks (the header row and the rule left out)."""
    text = DOCS.read_text()
    section = text[text.index(f"\n## {heading}\n") :]
    lines = section.split("\n|", 1)[1].split("\n\n", 1)[0].split("\n")[2:]
    return [
        [cell.strip().replace("`", "") for cell in line.strip("|").split("|")] for line in lines
    ]


def first_column(heading: str) -> list[str]:
    """A table's first column, each name without its parameters (`read(options)`: `read`)."""
    return [row[0].split("(")[0] for row in table(heading)]


def protocol_members(*protocols: type) -> list[str]:
    return [name for p in protocols for name in vars(p) if not name.startswith("_")]


def test_the_documented_fields_are_the_contracts() -> None:
    assert first_column("`RunOptions`") == [f.name for f in fields(RunOptions)]
    assert first_column("`Generated`") == [f.name for f in fields(Generated)]
    assert first_column("Emitters: `Emitted` and `run_emitters`") == [
        f.name for f in fields(Emitted)
    ]


def test_the_documented_members_are_the_protocols() -> None:
    assert first_column("`Target`") == protocol_members(contract.Command, contract.Target)
    assert first_column("`Tool`") == protocol_members(contract.Command, contract.Tool)


def test_the_documented_commands_are_the_registered_ones() -> None:
    rows = table("opgen's commands")
    assert [(name, reference) for name, reference, *_ in rows] == list(COMMANDS.items())
    for name, reference, options, steps in rows:
        command = load_command(reference)
        assert command.name == name
        if is_target(command):
            assert options, name
            assert steps == f"{command.reader}, {command.emitter}", name  # type: ignore[attr-defined]
        else:
            assert (options, steps) == ("", ""), name


# -- a run from Python, without the command line --------------------------------------------

LIBRARY = """\
- func: lib::scale(Tensor x, float factor) -> Tensor
  dispatch:
    CPU: scale_cpu
"""


def files_under(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in root.rglob("*") if p.is_file()}


def test_a_target_runs_from_python_as_from_the_command_line(tmp_path: Path) -> None:
    from opgen.targets.torch_library.library import LibraryPaths, TorchLibraryOptions

    spec = tmp_path / "native_functions.yaml"
    spec.write_text(LIBRARY)
    out = io.StringIO()
    assert main(["torch-library", str(spec), "-o", str(tmp_path / "cli")], out, io.StringIO()) == 0
    target = load_target(COMMANDS["torch-library"])
    options = TorchLibraryOptions(LibraryPaths(str(spec)), RunOptions(str(tmp_path / "api")))
    generated = generate(target, options)
    assert generated.sources == ["src/lib_library.cpp"]
    made = {path: s.text(path) for s in generated.outputs for path in s.paths()}
    assert made == files_under(tmp_path / "cli")
    assert not (tmp_path / "api").exists()  # generating writes nothing


def test_a_drop_in_runs_from_python_as_from_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from opgen.installed_torchgen import packaged_aten
    from opgen.targets.backend.options import BackendOptions
    from opgen.targets.torch_version import choose_release

    aten = packaged_aten()
    if aten is None:
        pytest.skip("torchgen is not installed: no packaged ATen to generate from")
    yaml = str(DATA / "backends" / "xla.yaml")
    monkeypatch.chdir(tmp_path)
    err = io.StringIO()
    assert main(["backend", "-s", yaml, "-o", "cli", "-j", "1"], io.StringIO(), err) == 0
    release = choose_release(None, [aten, yaml])
    options = BackendOptions(yaml, RunOptions("api"), release=release.release)
    generated = generate(load_target(COMMANDS["backend"]), options)
    made = {
        path: s.text(path).replace("api/", "cli/") for s in generated.outputs for path in s.paths()
    }
    assert made == files_under(tmp_path / "cli")
    assert len(made) == 3


# -- where deliver renders -----------------------------------------------------------------


def generated_files(count: int) -> Generated:
    files = OutputSet("out")
    for i in range(count):
        files.add(f"f{i}.txt", "")
    return Generated((files,))


def test_a_run_of_few_files_renders_them_in_this_process() -> None:
    forking = pytest.importorskip("opgen.forked")
    if not forking.can_fork():
        pytest.skip("no os.fork here: every run renders in this process")
    run = RunOptions("out", jobs=2)
    few = contract.MIN_FILES_TO_FORK - 1
    assert rendering_jobs(generated_files(few), run) == 1
    assert rendering_jobs(generated_files(contract.MIN_FILES_TO_FORK), run) == 2
    assert rendering_jobs(generated_files(100), RunOptions("out", jobs=1)) == 1


def test_notices_come_before_anything_else(tmp_path: Path) -> None:
    err, out = io.StringIO(), io.StringIO()
    generated = Generated((), notices=("opgen: note: first",), notes=("a note",))
    contract.deliver(generated, RunOptions(str(tmp_path), dry_run=True), out, err)
    assert (out.getvalue(), err.getvalue()) == ("a note\n", "opgen: note: first\n")


def test_help_lists_every_command_in_the_registrys_order(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--help"]) == 0
    lines = capsys.readouterr().out.splitlines()
    listed = [line.split()[0] for line in lines if line.startswith("    ") and line[4] != " "]
    assert listed[: len(COMMANDS)] == list(COMMANDS)
