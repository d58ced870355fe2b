"""Output trees of torchgen's `gen_autograd_python` and of `opgen python`, to compare byte for byte.

Upstream has no command line for the Python bindings (PyTorch's build calls
`gen_autograd_python` from its own script), so the oracle calls the function in
a subprocess, named in generated comments as gen_autograd.py names itself. It
runs once per input set and test session (about 2 s); OPGEN_ORACLE_DIR keeps its
trees between test sessions while developing (never committed).

A second oracle runs only `gen_autograd_functions_python` (python_functions.h
and .cpp), for inputs whose operators the Python bindings reject (the edited
autograd variation's `bool[3]` argument). `python_variation` builds the autograd
variations (autograd_variations.py) for the bindings: their deprecated.yaml
keeps only the entries of functions the spec still has, since upstream rejects
an entry that names none.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from .aten_trees import Tree, oracle_tree, read_tree
from .autograd_trees import AutogradInputs
from .autograd_variations import VARIATIONS, split_entries

_ORACLE = """
import sys
import torchgen.packaged.autograd.gen_autograd as module
sys.modules["__main__"].__file__ = module.__file__
native, tags, out, autograd = sys.argv[1:]
module.gen_autograd_python(native, tags, out, autograd)
"""

_FUNCTIONS_ORACLE = """
import os
import sys
import torchgen.packaged.autograd.gen_autograd as module
from torchgen.packaged.autograd.gen_autograd_functions import gen_autograd_functions_python
from torchgen.packaged.autograd.load_derivatives import load_derivatives
sys.modules["__main__"].__file__ = module.__file__
native, tags, out, autograd = sys.argv[1:]
infos, _ = load_derivatives(os.path.join(autograd, "derivatives.yaml"), native, tags)
gen_autograd_functions_python(out, infos, os.path.join(autograd, "templates"))
"""


def torchgen_python_tree(
    inputs: AutogradInputs, root: Path, *, functions_only: bool = False
) -> Tree:
    """Upstream's tree for `inputs`; only python_functions.h/.cpp with `functions_only`."""
    arguments = [inputs.native_yaml, inputs.tags_yaml, str(root / "out"), inputs.autograd_dir]
    oracle = _FUNCTIONS_ORACLE if functions_only else _ORACLE
    kind = "python-functions" if functions_only else "python"
    return oracle_tree([sys.executable, "-c", oracle, *arguments], root, key=(kind, inputs))


def opgen_python_tree(inputs: AutogradInputs, root: Path, *flags: str) -> Tree:
    from opgen.cli import main

    root.mkdir(parents=True, exist_ok=True)
    arguments = [inputs.native_yaml, inputs.tags_yaml, str(root / "out"), inputs.autograd_dir]
    status = main(["python", *arguments, *flags])
    assert status == 0, f"opgen python exited with {status}"
    return read_tree(root)


def opgen_python_files(
    inputs: AutogradInputs, emitters: Iterable[Callable[..., Any]]
) -> dict[str, bytes]:
    """What the given emitters alone produce, rendered in memory, by path under the run's root."""
    from opgen.cli import build_parser
    from opgen.targets.emitters import run_emitters
    from opgen.targets.python.command import options_from
    from opgen.targets.python.generate import read
    from opgen.targets.python.run import OUT

    arguments = [inputs.native_yaml, inputs.tags_yaml, "out", inputs.autograd_dir]
    run = read(options_from(build_parser().parse_args(["python", *arguments])))
    out = run_emitters(run, emitters, {OUT: run.output_set()}).files[OUT]
    return {f"out/{path}": out.text(path).encode() for path in out.paths()}


def python_variation(name: str, root: Path, source: AutogradInputs) -> AutogradInputs:
    """The autograd variation `name` of `source` under `root`, its deprecated.yaml trimmed."""
    inputs = VARIATIONS[name](root, source)
    deprecated = Path(inputs.autograd_dir, "deprecated.yaml")
    _, functions = split_entries(Path(inputs.native_yaml).read_text(), "func")
    names = {f.name.split(".", 1)[0] for f in functions}
    header, entries = split_entries(deprecated.read_text(), "name")
    deprecated.write_text(header + "".join(e.text for e in entries if e.name in names))
    return inputs
