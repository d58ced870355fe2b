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


def fallback_table_layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A checkout of torch 2.12.1 without torchgen/ (its ATen sources and version.txt
    only), and a torchgen of torch 2.13.0 installed: (the checkout's ATen, the
    installed table)."""
    aten = tmp_path / "checkout" / "aten" / "src" / "ATen"
    (aten / "native").mkdir(parents=True)
    (tmp_path / "checkout" / "version.txt").write_text("2.12.1\n")
    site = tmp_path / "site-packages"
    (site / "torchgen" / "aoti").mkdir(parents=True)
    (site / "torchgen" / "__init__.py").write_text("")
    table = site / "torchgen" / "aoti" / "fallback_ops.py"
    table.write_text("inductor_fallback_ops = {}\naten_shimified_ops = {}\n")
    (site / "torch").mkdir()
    (site / "torch" / "version.py").write_text("__version__ = '2.13.0'\n")
    monkeypatch.syspath_prepend(str(site))
    return aten, table


def test_a_fallback_table_of_another_release_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    aten, table = fallback_table_layout(tmp_path, monkeypatch)
    out = tmp_path / "out"
    status, err = run("aten", "-s", str(aten), "-d", str(out))
    checkout = tmp_path / "checkout"
    assert (status, err) == (
        2,
        "opgen aten: error: the AOTInductor fallback-op table of torch 2.12 was not found "
        f"beside --source-path (looked for {checkout}/aten/aoti/fallback_ops.py and "
        f"{checkout}/torchgen/aoti/fallback_ops.py); the installed torchgen's, {table}, is "
        f"torch 2.13.0's (from {tmp_path}/site-packages/torch/version.py), and a run for "
        "torch 2.12 does not read another release's table. Run from the torch 2.12 checkout "
        "or wheel whose torchgen/ holds aoti/fallback_ops.py, or name torch 2.12's table "
        "with --aoti-fallback-ops FILE\n",
    )
    assert not out.exists()


def test_a_fallback_table_is_needed_only_for_the_sources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    aten, table = fallback_table_layout(tmp_path, monkeypatch)
    headers = options_from(
        build_parser().parse_args(["aten", "-s", str(aten), "--generate", "headers"])
    )
    assert headers.aoti_fallback_ops is None
    named = ["aten", "-s", str(aten), "--aoti-fallback-ops", str(table)]
    assert options_from(build_parser().parse_args(named)).aoti_fallback_ops == str(table)
    same = ["aten", "-s", str(aten), "--torch-version", "2.13"]
    assert options_from(build_parser().parse_args(same)).aoti_fallback_ops == str(table)
