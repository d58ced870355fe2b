"""The flags of one `opgen autograd` run, and what follows from them."""

from __future__ import annotations

from opgen.frozen import frozen
from opgen.targets.autograd_dir import AutogradDirOptions

# What `python -m torchgen.packaged.autograd.gen_autograd` names as the generator in
# the `generated_comment` of the files it renders without one of their own.
AUTOGRAD_GENERATOR = "torchgen/packaged/autograd/gen_autograd.py"


@frozen
class AutogradOptions(AutogradDirOptions):
    op_selection_yaml_path: str | None = None
    disable_autograd: bool = False  # only Functions, variable_factories and ViewFuncs
