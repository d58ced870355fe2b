"""Output trees of torchgen's autograd generator and of `opgen autograd`, to compare byte for byte.

Each configuration is a set of options. torchgen runs once per configuration
and test session (about 3 s); set OPGEN_ORACLE_DIR to keep its trees between
test sessions while developing (keyed by the torch version and the configuration,
never committed). Upstream's command line has no selection or
disable-autograd flags (PyTorch's build passes them as arguments of
`gen_autograd`), so the oracle calls the function.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .aten_trees import DATA, Tree, oracle_tree, read_tree

# Options of each configuration the autograd target must reproduce.
CONFIGS: dict[str, tuple[str, ...]] = {
    "default": (),
    "selection": ("--op-selection-yaml-path", str(DATA / "autograd_selection.yaml")),
    "disable_autograd": ("--disable-autograd",),
}


@dataclass(frozen=True)
class AutogradInputs:
    native_yaml: str
    tags_yaml: str
    autograd_dir: str


_ORACLE = """
import sys
import torchgen.packaged.autograd.gen_autograd as module
from torchgen.packaged.autograd.gen_autograd import gen_autograd
# Name the generator in generated comments as `python -m ...gen_autograd` does.
sys.modules["__main__"].__file__ = module.__file__
from torchgen.selective_build.selector import SelectiveBuilder
native, tags, out, autograd, selection, disable = sys.argv[1:]
selector = (
    SelectiveBuilder.from_yaml_path(selection) if selection else SelectiveBuilder.get_nop_selector()
)
gen_autograd(native, tags, out, autograd, selector, disable_autograd=disable == "1")
"""


def torchgen_autograd_tree(flags: tuple[str, ...], inputs: AutogradInputs, root: Path) -> Tree:
    selection = (
        flags[flags.index("--op-selection-yaml-path") + 1]
        if "--op-selection-yaml-path" in flags
        else ""
    )
    disable = "1" if "--disable-autograd" in flags else "0"
    command = [
        sys.executable,
        "-c",
        _ORACLE,
        inputs.native_yaml,
        inputs.tags_yaml,
        str(root / "out"),
        inputs.autograd_dir,
        selection,
        disable,
    ]
    return oracle_tree(command, root, key=("autograd", flags, inputs))


def opgen_autograd_tree(flags: tuple[str, ...], inputs: AutogradInputs, root: Path) -> Tree:
    from opgen.cli import main

    root.mkdir(parents=True, exist_ok=True)
    status = main(
        [
            "autograd",
            inputs.native_yaml,
            inputs.tags_yaml,
            str(root / "out"),
            inputs.autograd_dir,
            *flags,
        ]
    )
    assert status == 0, f"opgen autograd {' '.join(flags)} exited with {status}"
    return read_tree(root)


def opgen_autograd_files(
    flags: tuple[str, ...],
    inputs: AutogradInputs,
    emitters: Iterable[Callable[..., Any]],
    *,
    upstream_model: bool = False,
) -> dict[str, bytes]:
    """What the given emitters alone produce, rendered in memory, by path under the run's root.

    With `upstream_model`, the run uses torchgen's derivatives model converted to
    opgen's classes (`torchgen_autograd`) instead of opgen's loader: for testing
    an emitter on its own.
    """
    from opgen.cli import build_parser
    from opgen.targets.autograd.command import options_from
    from opgen.targets.autograd.generate import read
    from opgen.targets.autograd.run import OUT
    from opgen.targets.emitters import run_emitters

    args = build_parser().parse_args(
        ["autograd", inputs.native_yaml, inputs.tags_yaml, "out", inputs.autograd_dir, *flags]
    )
    options = options_from(args)
    run = _upstream_run(options, inputs) if upstream_model else read(options)
    out = run_emitters(run, emitters, {OUT: run.output_set()}).files[OUT]
    return {f"out/{path}": out.text(path).encode() for path in out.paths()}


def _upstream_run(options: Any, inputs: AutogradInputs) -> Any:
    from torchgen.selective_build.selector import SelectiveBuilder

    from opgen.spec.model import load_spec
    from opgen.spec.selection import OperatorSelection
    from opgen.targets.autograd.run import AutogradRun

    from .torchgen_autograd import torchgen_autograd

    spec = load_spec(inputs.native_yaml, inputs.tags_yaml)
    path = options.op_selection_yaml_path
    selector = SelectiveBuilder.from_yaml_path(path) if path else None
    model = torchgen_autograd(
        spec, inputs.native_yaml, inputs.tags_yaml, inputs.autograd_dir, selector
    )
    by_function = {fn.func: fn for fn in model.fns_with_diff_infos}

    def match(functions: list[object], _: object) -> list[object]:
        return [by_function[f] for f in functions]  # type: ignore[index]

    selection = OperatorSelection.from_flags(None, path)
    return AutogradRun.of(options, spec, selection, model.infos, match)


def assert_family(theirs: Tree, ours: dict[str, bytes], family: Callable[[str], bool]) -> None:
    """opgen's files are exactly the family's files of torchgen's tree, byte for byte."""
    from .aten_trees import assert_same_files

    assert_same_files({p: d for p, d in theirs.files.items() if family(p)}, ours)
