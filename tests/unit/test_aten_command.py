"""`opgen aten` flags: usage errors exit 2 before anything is read."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from opgen.cli import build_parser, main
from opgen.jobs import default_jobs
from opgen.targets.aten.command import options_from


def run(*argv: str) -> tuple[int, str]:
    err = io.StringIO()
    status = main(list(argv), out=io.StringIO(), err=err)
    return status, err.getvalue()


@pytest.mark.parametrize("value", ["0", "-1", "two"])
def test_jobs_must_be_a_positive_integer(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, _ = run("aten", "--jobs", value)
    assert status == 2
    assert (
        f"argument -j/--jobs: expected a positive integer, not '{value}'" in capsys.readouterr().err
    )


def test_jobs_default_to_the_available_cores_at_most_four() -> None:
    options = options_from(build_parser().parse_args(["aten"]))
    assert options.run.jobs == default_jobs()
    assert 1 <= options.run.jobs <= 4
    assert options_from(build_parser().parse_args(["aten", "-j", "3"])).run.jobs == 3


def test_conflicting_selections_are_a_usage_error(tmp_path: Path) -> None:
    status, err = run(
        "aten",
        "-s",
        str(tmp_path),
        "--op-registration-whitelist",
        "aten::add",
        "--op-selection-yaml-path",
        str(tmp_path / "selection.yaml"),
    )
    assert (status, err) == (
        2,
        "opgen aten: error: --op-registration-whitelist and --op-selection-yaml-path "
        "cannot be given together\n",
    )
    assert list(tmp_path.iterdir()) == []
