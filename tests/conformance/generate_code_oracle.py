"""Upstream's side of `opgen generate-code`: the torchgen functions PyTorch's
`tools/setup_helpers/generate_code.py` calls, called as it calls them.

generate_code.py lives in PyTorch's repository, not in the wheel; the generators it
calls do (`tools/autograd` is `torchgen/packaged/autograd` there, which
`--autograd-dir` names). This script takes generate_code.py's flags and makes the
same calls, in the working directory, with the same directories and fixed
arguments; run it with the torchgen under test on its path (the installed one, or
a release's through PYTHONPATH). torchgen names its `__main__` script in generated
comments: this one poses as generate_code.py in a checkout whose root is the
directory above `torchgen`.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import torchgen
from torchgen.gen_functionalization_type import gen_functionalization_view_meta_classes
from torchgen.packaged.autograd.gen_annotated_fn_args import gen_annotated
from torchgen.packaged.autograd.gen_autograd import gen_autograd, gen_autograd_python
from torchgen.selective_build.selector import SelectiveBuilder

import __main__


def selector(args: argparse.Namespace) -> SelectiveBuilder:
    if args.operators_yaml_path is not None:
        return SelectiveBuilder.from_yaml_path(args.operators_yaml_path)
    if args.selected_op_list_path is None:
        return SelectiveBuilder.get_nop_selector()
    import yaml

    names = yaml.safe_load(Path(args.selected_op_list_path).read_text())
    return SelectiveBuilder.from_legacy_op_registration_allow_list(
        {name.split(".", 1)[0] for name in names}, True, True
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--native-functions-path", required=True)
    parser.add_argument("--tags-path", required=True)
    parser.add_argument("--gen-dir", type=Path, default=Path("."))
    parser.add_argument("--install-dir")
    parser.add_argument("--subset")
    parser.add_argument("--disable-autograd", action="store_true")
    parser.add_argument("--selected-op-list-path")
    parser.add_argument("--operators-yaml-path")
    parser.add_argument("--gen-lazy-ts-backend", action="store_true")
    parser.add_argument("--per-operator-headers", action="store_true")
    # Where generate_code.py's own checkout has tools/autograd.
    parser.add_argument("--autograd-dir", required=True)
    args = parser.parse_args()

    repo = Path(torchgen.__file__).parent.parent
    __main__.__file__ = str(repo / "tools" / "setup_helpers" / "generate_code.py")
    aten = os.path.dirname(os.path.dirname(args.native_functions_path))
    autograd_dir = args.autograd_dir
    native, tags = args.native_functions_path, args.tags_path
    chosen = selector(args)

    if args.install_dir is None:
        install_dir = os.fspath(args.gen_dir / "torch" / "csrc")
        python_dir = os.fspath(args.gen_dir / "torch" / "testing" / "_internal" / "generated")
    else:
        install_dir = python_dir = args.install_dir
    autograd_out = os.path.join(install_dir, "autograd", "generated")
    os.makedirs(autograd_out, exist_ok=True)
    os.makedirs(python_dir, exist_ok=True)
    if args.subset in (None, "pybindings"):
        gen_autograd_python(native, tags, autograd_out, autograd_dir)
    if args.subset in (None, "libtorch"):
        gen_autograd(
            native,
            tags,
            autograd_out,
            autograd_dir,
            disable_autograd=args.disable_autograd,
            operator_selector=chosen,
        )
    if args.subset in (None, "python"):
        gen_annotated(native, tags, python_dir, autograd_dir)

    view_meta_out = os.path.join(install_dir, "functionalization", "generated")
    os.makedirs(view_meta_out, exist_ok=True)
    gen_functionalization_view_meta_classes(
        native,
        tags,
        selector=chosen,
        install_dir=view_meta_out,
        template_dir=os.path.join(aten, "templates"),
    )

    if args.gen_lazy_ts_backend:
        from torchgen.dest.lazy_ir import GenTSLazyIR
        from torchgen.gen_lazy_tensor import run_gen_lazy_tensor

        lazy_out = os.path.join(install_dir, "lazy", "generated")
        os.makedirs(lazy_out, exist_ok=True)
        run_gen_lazy_tensor(
            aten_path=aten,
            source_yaml=os.path.join(aten, "native", "ts_native_functions.yaml"),
            backend_name="TorchScript",
            output_dir=lazy_out,
            dry_run=False,
            impl_path="torch/csrc/lazy/ts_backend/ts_native_functions.cpp",
            node_base="TsNode",
            node_base_hdr="torch/csrc/lazy/ts_backend/ts_node.h",
            build_in_tree=True,
            lazy_ir_generator=GenTSLazyIR,
            per_operator_headers=args.per_operator_headers,
            gen_forced_fallback_code=True,
        )


if __name__ == "__main__":
    main()
