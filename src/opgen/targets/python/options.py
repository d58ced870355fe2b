"""The flags of one `opgen python` run, and what follows from them."""

from __future__ import annotations

import os

from opgen.frozen import frozen

# What upstream names as the generator in the `generated_comment` of files it renders
# without one of their own, run as PyTorch's build runs it (through gen_autograd).
PYTHON_GENERATOR = "torchgen/packaged/autograd/gen_autograd.py"


@frozen
class PythonOptions:
    native_yaml: str
    tags_yaml: str
    out: str
    autograd_dir: str  # templates/, derivatives.yaml, deprecated.yaml
    dry_run: bool = False
    output_dependencies: str | None = None
    jobs: int = 1

    @property
    def template_dir(self) -> str:
        return os.path.join(self.autograd_dir, "templates")

    @property
    def derivatives_yaml(self) -> str:
        return os.path.join(self.autograd_dir, "derivatives.yaml")

    @property
    def deprecated_yaml(self) -> str:
        return os.path.join(self.autograd_dir, "deprecated.yaml")
