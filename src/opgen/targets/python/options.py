"""The flags of one `opgen python` run, and what follows from them."""

from __future__ import annotations

from opgen.frozen import frozen
from opgen.targets.autograd_dir import AutogradDirOptions

# What upstream names as the generator in the `generated_comment` of files it renders
# without one of their own, run as PyTorch's build runs it (through gen_autograd).
PYTHON_GENERATOR = "torchgen/packaged/autograd/gen_autograd.py"


@frozen
class PythonOptions(AutogradDirOptions):
    """`opgen python` takes the shared inputs and write options, and where to write the
    ViewMeta classes' bindings, if anywhere."""

    view_meta_bindings: str | None = None
