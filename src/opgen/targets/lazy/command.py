"""`opgen lazy`: the command line of `python -m torchgen.gen_lazy_tensor`, and the rest.

Upstream's command line has `-s`, `-o`, `--dry-run`, `--impl-path`,
`--gen-ts-lowerings`, `--node-base(-hdr)`, `--shape-inference-hdr`,
`--tensor-class(-hdr)` and `--backend-name`; the other keyword arguments of
its `run_gen_lazy_tensor` (what torch_xla and PyTorch's own build pass) are
flags here too, one per `LazyOptions` field, named after it. The spec and
templates come from `--source-path` or the installed torchgen's packaged
ATen, as for `opgen backend`.
"""

from __future__ import annotations

import argparse

from opgen.frozen import fields
from opgen.targets.backend.command import add_common_arguments, backend_options
from opgen.targets.contract import LazyTarget
from opgen.targets.lazy.options import LazyBackendOptions, LazyOptions

# Upstream's own flags, with its help; the other LazyOptions fields get a generic one.
_UPSTREAM_HELP = {
    "gen_ts_lowerings": "generate TorchScript lowerings (Lower methods) in the IR nodes",
    "node_base": "the IR nodes' base class",
    "node_base_hdr": "the header of the IR nodes' base class",
    "shape_inference_hdr": "the header declaring the compute_shape_* functions (checked)",
    "tensor_class": "the backend's lazy tensor class",
    "tensor_class_hdr": "the header of the lazy tensor class",
    "backend_name": "the backend's name, in the registering function's name",
}
_DEFAULTS = LazyOptions()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_common_arguments(parser)
    for field in fields(LazyOptions):
        name = field.name
        default = getattr(_DEFAULTS, name)
        help_text = _UPSTREAM_HELP.get(name, f"run_gen_lazy_tensor's {name}")
        if default is True:
            parser.add_argument(
                f"--no-{name.replace('_', '-')}",
                dest=name,
                action="store_false",
                help=f"{help_text}: off (default: on)",
            )
        elif default is False:
            flags = (f"--{name.replace('_', '-')}", f"--{name}")
            parser.add_argument(*flags, dest=name, action="store_true", help=help_text)
        else:
            flags = (f"--{name.replace('_', '-')}", f"--{name}")
            parser.add_argument(
                *flags,
                dest=name,
                default=default,
                metavar="TEXT",
                help=f"{help_text} (default: %(default)s)",
            )


def options_from(args: argparse.Namespace) -> LazyBackendOptions:
    lazy = LazyOptions(**{f.name: getattr(args, f.name) for f in fields(LazyOptions)})
    return LazyBackendOptions(backend_options(args), lazy)


TARGET = LazyTarget(
    name="lazy",
    help="generate a lazy-tensor backend's IR and kernels, as gen_lazy_tensor does",
    description=(
        "Generate a lazy-tensor backend's IR node classes, kernels, kernel class header and "
        "registrations from its backend YAML, byte for byte as torchgen's gen_lazy_tensor "
        "does, with the same flags (and one per run_gen_lazy_tensor argument)."
    ),
    add_arguments=add_arguments,
    options=options_from,
    reader="opgen.targets.lazy.generate:read",
    emitter="opgen.targets.lazy.generate:emit",
)
