"""`opgen pyi`: the type stubs torch ships that are generated from the spec.

The positional arguments are those of `opgen autograd`'s first three; the
deprecated signatures and the docstrings are options, since the stubs are
complete (if less helpful) without them.
"""

from __future__ import annotations

import argparse

from opgen.targets.contract import LazyTarget, RunOptions
from opgen.targets.pyi.options import PyiOptions
from opgen.targets.torch_version import add_torch_version_argument, choose_release

DESCRIPTION = """\
Generate the type stubs of torch's generated bindings under OUT:
torch/_C/_VariableFunctions.pyi and its copy torch/_VF.pyi (the torch.* functions),
torch/return_types.pyi (the structseq classes), torch/_C/_nn.pyi (torch._C._nn), and
torch/_C/TensorBase.pyi.fragment: the generated part of class TensorBase in
torch/_C/__init__.pyi (the rest of that file is hand-written in PyTorch), indented
as the class body. Files whose content is unchanged are not rewritten.
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add("native_functions", metavar="NATIVE", help="native_functions.yaml")
    add("tags", metavar="TAGS", help="tags.yaml")
    add("out", metavar="OUT", help="output directory (the files go to OUT/torch/...)")
    add(
        "--deprecated",
        metavar="DEPRECATED_YAML",
        help="deprecated.yaml: the deprecated argument orders the torch.* stubs declare "
        "too; without it there are none",
    )
    add(
        "--docs",
        metavar="TORCH_PACKAGE_DIR",
        help="torch's package directory: docstrings from its _torch_docs.py and "
        "_tensor_docs.py, read without importing them; without it the stubs have none",
    )
    add("--dry-run", action="store_true", help="generate everything but write no file")
    add_torch_version_argument(parser)


def options_from(args: argparse.Namespace) -> PyiOptions:
    release = choose_release(args.torch_version, [args.native_functions, args.docs])
    return PyiOptions(
        native_yaml=args.native_functions,
        tags_yaml=args.tags,
        run=RunOptions(args.out, dry_run=args.dry_run),
        deprecated_yaml=args.deprecated,
        docs_dir=args.docs,
        release=release.release,
        release_notice=release.notice,
    )


TARGET = LazyTarget(
    name="pyi",
    help="generate the .pyi stubs of torch's generated bindings, as tools/pyi/gen_pyi.py does",
    description=DESCRIPTION,
    add_arguments=add_arguments,
    options=options_from,
    reader="opgen.targets.pyi.generate:read",
    emitter="opgen.targets.pyi.generate:emit",
)
