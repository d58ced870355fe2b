"""`opgen dump`: the same bytes however many processes render the records."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from opgen.cli import main
from opgen.spec import Spec, load_spec
from opgen.tooling.dump import dump_chunks, dump_lines
from opgen.tooling.spec_files import bundled_example

SPEC = """\
- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  variants: function, method
  dispatch:
    CPU: add_cpu
- func: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    CPU: add_out
- func: ones(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, \
bool? pin_memory=None) -> Tensor
  dispatch:
    CompositeExplicitAutograd: ones
"""


def dump(*argv: str) -> str:
    out = io.StringIO()
    assert main(["dump", *argv], out, io.StringIO()) == 0
    return out.getvalue()


@pytest.mark.parametrize("signatures", [False, True])
def test_chunks_are_the_lines_in_order_for_any_number_of_workers(
    tmp_path: Path, signatures: bool
) -> None:
    path = tmp_path / "native_functions.yaml"
    path.write_text(SPEC)
    spec = load_spec(str(path), None)
    expected = "".join(line + "\n" for line in dump_lines(spec, signatures=signatures))
    assert expected.count("\n") == len(spec.functions) == 3
    for workers in (1, 2, 3, 4):
        chunks = dump_chunks(spec, signatures=signatures, workers=workers)
        assert "".join(chunks) == expected


def test_jobs_do_not_change_the_output() -> None:
    native = bundled_example().native
    once = dump("--signatures", "-j", "1", native)
    assert once.count("\n") > 10
    assert dump("--signatures", "-j", "2", native) == once
    assert dump("--signatures", "-j", "3", native) == once


def test_jobs_must_be_a_positive_integer(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dump", "-j", "0"]) == 2
    assert "argument -j/--jobs: expected a positive integer, not '0'" in capsys.readouterr().err


def test_the_model_outlives_the_command_when_the_caller_retains_it() -> None:
    retained: list[object] = []
    out = io.StringIO()
    assert main(["dump", "-j", "1"], out, io.StringIO(), retain=retained.append) == 0
    (spec,) = [r for r in retained if isinstance(r, Spec)]
    assert len(spec.functions) == out.getvalue().count("\n")
    assert len(retained) == 2  # and the dump's own state, with the signatures it derived
