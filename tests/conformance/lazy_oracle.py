"""Run upstream's `run_gen_lazy_tensor` as `python -m torchgen.gen_lazy_tensor` would in a checkout.

`python -m torchgen.gen_lazy_tensor` cannot run from torch's wheel: it looks
for the spec in `aten/src/ATen` three directories above itself. This script
calls the function its `main` calls, with the packaged ATen and the keyword
arguments given as JSON (`gen_ts_lowerings` chooses the TorchScript node
generator, as the flag does), and names upstream's module as the generator in
the generated comments, as a run of the module would. With `"link": true`,
the working directory gets a `torch` link to torch's installed headers while
it runs, so that the default shape-inference header path resolves.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import torchgen
import torchgen.gen_lazy_tensor as upstream
from torchgen.dest.lazy_ir import GenTSLazyIR

import __main__


def main() -> None:
    kwargs = json.loads(sys.argv[1])
    if kwargs.pop("gen_ts_lowerings", False):
        kwargs["lazy_ir_generator"] = GenTSLazyIR
    link = Path("torch")
    if kwargs.pop("link", False):
        torch = importlib.util.find_spec("torch")  # found, not imported: that takes seconds
        assert torch is not None and torch.submodule_search_locations is not None
        link.symlink_to(Path(next(iter(torch.submodule_search_locations))) / "include" / "torch")
    __main__.__file__ = upstream.__file__
    try:
        aten = Path(torchgen.__file__).parent / "packaged" / "ATen"
        upstream.run_gen_lazy_tensor(aten_path=str(aten), **kwargs)
    finally:
        if link.is_symlink():
            link.unlink()


if __name__ == "__main__":
    main()
