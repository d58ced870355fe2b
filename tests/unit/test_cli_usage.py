"""The command line's usage errors and summaries: a misspelt command or flag gets the
nearest one, in the words of the command run; counts agree with their nouns.

Usage errors exit 2 and go to stderr, as argparse writes them (its usage, then
`opgen check: error: ...`); the exact usage lines depend on the terminal's width, so
only their start is held here.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from opgen.cli import main
from opgen.counts import counted, warnings_counted
from opgen.tooling.spec_files import bundled_example


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out, err)
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (
            ["check", "--libary", "x.yaml"],
            "opgen check: error: unrecognized arguments: --libary; did you mean '--library'?",
        ),
        (
            ["dump", "x.yaml", "--sigantures"],
            "opgen dump: error: unrecognized arguments: --sigantures; did you mean '--signatures'?",
        ),
        (
            ["diff", "a.yaml", "b.yaml", "--mlxx"],
            "opgen diff: error: unrecognized arguments: --mlxx; did you mean '--mlx'?",
        ),
        (
            ["coverage", "a.yaml", "--againts=b.yaml"],
            "opgen coverage: error: unrecognized arguments: --againts=b.yaml; did you mean "
            "'--against'?",
        ),
        (["check", "a.yaml", "b.yaml"], "opgen check: error: unrecognized arguments: b.yaml"),
        (
            ["check", "--zzzzzz"],
            "opgen check: error: unrecognized arguments: --zzzzzz",
        ),
    ],
)
def test_a_bad_argument_names_the_commands_usage_and_the_nearest_flag(
    argv: list[str], error: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: opgen {argv[0]} [-h]")
    assert err.endswith(f"\n{error}\n")


def test_an_unknown_command_suggests_the_nearest(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["chek", "lib.yaml"]) == 2
    assert capsys.readouterr().err == (
        "usage: opgen [-h] [--version] COMMAND ...\n"
        "opgen: error: argument COMMAND: invalid choice: 'chek'; did you mean 'check'?\n"
    )


def test_check_without_a_spec_names_the_bundled_example() -> None:
    assert run("check") == (
        0,
        f"{bundled_example().native} (the bundled example): ok: 37 entries, 48 functions "
        "(11 derived), 16 groups, 3 view groups\n",
        "",
    )


def test_check_counts_agree_with_their_nouns(tmp_path: Path) -> None:
    spec = tmp_path / "native_functions.yaml"
    spec.write_text(
        "- func: relu(Tensor self) -> Tensor\n"
        "  dispatch:\n"
        "    CompositeExplicitAutograd: relu\n"
        "  autogen: relu.out\n"
    )
    assert run("check", str(spec)) == (
        0,
        f"{spec}: ok: 1 entry, 2 functions (1 derived), 1 group, 0 view groups\n",
        "",
    )


def test_counted() -> None:
    assert [counted(n, "finding") for n in (0, 1, 2)] == ["0 findings", "1 finding", "2 findings"]
    assert [counted(n, "entry") for n in (1, 2)] == ["1 entry", "2 entries"]
    assert counted(2, "kernel key") == "2 kernel keys"
    assert counted(3, "view group") == "3 view groups"
    assert counted(2, "body", "bodies") == "2 bodies"
    assert [warnings_counted(n) for n in (0, 1, 2)] == ["", ", 1 warning", ", 2 warnings"]


def test_a_usage_error_found_while_running_is_a_usage_error(tmp_path: Path) -> None:
    """`check --library` reads `--torch-version` only when it reads the library."""
    spec = tmp_path / "ops.yaml"
    spec.write_text("- func: toy::a(Tensor x) -> Tensor\n  dispatch:\n    CPU: a\n")
    assert run("check", "--library", "--torch-version", "2.9", str(spec)) == (
        2,
        "",
        "opgen check: error: torch 2.9 (from --torch-version) is older than the releases opgen "
        "supports: 2.10, 2.11, 2.12, 2.13, 2.14, 2.15\n",
    )
