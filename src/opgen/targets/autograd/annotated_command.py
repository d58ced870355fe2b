"""`opgen annotated-fn-args`: the command line of torchgen's `gen_annotated_fn_args`.

A drop-in for `python -m torchgen.packaged.autograd.gen_annotated_fn_args
NATIVE TAGS OUT AUTOGRAD_DIR`, which writes OUT/annotated_fn_args.py
(annotated_fn_args.py) from AUTOGRAD_DIR/templates/annotated_fn_args.py.in.
"""

from __future__ import annotations

import argparse

from opgen.targets.autograd_dir import AutogradDirOptions, add_input_arguments, option_fields
from opgen.targets.contract import Generated


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_input_arguments(parser, autograd_dir="the directory of templates/")
    parser.add_argument("--dry-run", action="store_true", help="write no file")


def options_from(args: argparse.Namespace) -> AutogradDirOptions:
    return AutogradDirOptions(**option_fields(args))


class AnnotatedFnArgsTarget:
    name = "annotated-fn-args"
    help = "generate annotated_fn_args.py, as torchgen's gen_annotated_fn_args does"
    description = (
        "Generate annotated_fn_args.py (the arguments of every Python binding, for PyTorch's "
        "__torch_function__ tests), byte for byte as "
        "`python -m torchgen.packaged.autograd.gen_annotated_fn_args` does."
    )
    add_arguments = staticmethod(add_arguments)
    options = staticmethod(options_from)

    @staticmethod
    def generate(options: AutogradDirOptions) -> Generated:
        # Imported here so that the other commands do not pay for the target.
        from opgen.spec.model import load_spec
        from opgen.targets.autograd.annotated_fn_args import annotated_fn_args_outputs

        spec = load_spec(options.native_yaml, options.tags_yaml)
        outputs = annotated_fn_args_outputs(spec, options.out, options.autograd_dir)
        return Generated((outputs,), model=spec)


TARGET = AnnotatedFnArgsTarget()
