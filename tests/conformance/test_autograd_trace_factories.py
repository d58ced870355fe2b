"""TraceType, variable_factories.h and annotated_fn_args.py, byte for byte.

For every configuration of `autograd_trees.CONFIGS`, the emitters of this
family that `opgen autograd` runs in that configuration (TraceType is part of
autograd proper, so `--disable-autograd` drops it) must produce exactly the
family's files of upstream's tree. They run on upstream's derivatives model
(`upstream_model=True`), so that this family is tested on its own.

`annotated_fn_args.py` comes from its own upstream command, run live.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from opgen.cli import main
from opgen.targets.autograd.generate import EMITTERS
from opgen.targets.autograd.trace_type import emit_trace_type
from opgen.targets.autograd.variable_factories import emit_variable_factories
from opgen.targets.emitters import Emitted

from .aten_trees import Tree, assert_same_files
from .autograd_trees import (
    CONFIGS,
    AutogradInputs,
    assert_family,
    opgen_autograd_files,
)

FAMILY = re.compile(r"out/(TraceType(_\d|Everything)\.cpp|variable_factories\.h)\Z")


def _emitters(config: str) -> list[Callable[..., Emitted]]:
    """This family's emitters that the command runs in `config`, in the command's order."""
    disabled = "--disable-autograd" in CONFIGS[config]
    ours = (emit_trace_type, emit_variable_factories)
    return [emit for proper, emit in EMITTERS if emit in ours and not (proper and disabled)]


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_family_matches_torchgen(
    config: str,
    autograd_inputs: AutogradInputs,
    torchgen_autograd_trees: Callable[[str], Tree],
) -> None:
    theirs = torchgen_autograd_trees(config)
    ours = opgen_autograd_files(
        CONFIGS[config], autograd_inputs, _emitters(config), upstream_model=True
    )
    assert ours, "the family produced no file"
    assert_family(theirs, ours, lambda path: FAMILY.match(path) is not None)


def test_trace_type_is_part_of_autograd_proper_and_factories_are_not() -> None:
    proper = {emit: flag for flag, emit in EMITTERS}
    assert proper[emit_trace_type] is True
    assert proper[emit_variable_factories] is False


def _annotated_fn_args_command(inputs: AutogradInputs, out: Path) -> list[str]:
    return [inputs.native_yaml, inputs.tags_yaml, str(out), inputs.autograd_dir]


def test_annotated_fn_args_matches_torchgen(
    autograd_inputs: AutogradInputs, tmp_path: Path
) -> None:
    arguments = _annotated_fn_args_command(autograd_inputs, tmp_path / "torchgen")
    upstream = [sys.executable, "-m", "torchgen.packaged.autograd.gen_annotated_fn_args"]
    subprocess.run([*upstream, *arguments], check=True, capture_output=True)
    theirs = {
        p.relative_to(tmp_path / "torchgen").as_posix(): p.read_bytes()
        for p in (tmp_path / "torchgen").rglob("*")
    }
    out = tmp_path / "opgen"
    assert main(["annotated-fn-args", *_annotated_fn_args_command(autograd_inputs, out)]) == 0
    ours = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*")}
    assert list(theirs) == ["annotated_fn_args.py"]
    assert_same_files(theirs, ours)


def test_annotated_fn_args_dry_run_writes_nothing(
    autograd_inputs: AutogradInputs, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    command = ["annotated-fn-args", *_annotated_fn_args_command(autograd_inputs, out)]
    assert main([*command, "--dry-run"]) == 0
    assert not out.exists()
