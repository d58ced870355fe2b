"""What the generators of torchgen's autograd directory share: their inputs and how they write.

Upstream's `gen_autograd`, `gen_autograd_python` and `gen_annotated_fn_args`
all take `NATIVE TAGS OUT AUTOGRAD_DIR`: the spec, its tags, the output
directory, and the directory of `templates/`, `derivatives.yaml` and
`deprecated.yaml`. `opgen autograd`, `opgen python` and `opgen
annotated-fn-args` take the same, plus opgen's write options (`--dry-run`,
`-o`, `-j`), parsed here into `AutogradDirOptions`, which each target's
options extend. Each writes one set of files, which `-o` lists.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from opgen.frozen import frozen
from opgen.jobs import add_jobs_argument, default_jobs
from opgen.output import OutputSet
from opgen.targets.contract import Generated, RunOptions
from opgen.targets.torch_version import add_torch_version_argument, choose_release


@frozen
class AutogradDirOptions:
    native_yaml: str
    tags_yaml: str
    autograd_dir: str  # templates/, derivatives.yaml, deprecated.yaml
    run: RunOptions  # OUT is its output directory

    @property
    def out(self) -> str:
        return self.run.output_dir

    @property
    def template_dir(self) -> str:
        return os.path.join(self.autograd_dir, "templates")

    @property
    def derivatives_yaml(self) -> str:
        return os.path.join(self.autograd_dir, "derivatives.yaml")

    @property
    def deprecated_yaml(self) -> str:
        return os.path.join(self.autograd_dir, "deprecated.yaml")


def add_input_arguments(parser: argparse.ArgumentParser, *, autograd_dir: str) -> None:
    """NATIVE TAGS OUT AUTOGRAD_DIR, upstream's positional arguments."""
    add = parser.add_argument
    add("native_functions", metavar="NATIVE", help="native_functions.yaml")
    add("tags", metavar="TAGS", help="tags.yaml")
    add("out", metavar="OUT", help="output directory")
    add("autograd", metavar="AUTOGRAD_DIR", help=autograd_dir)


def add_write_arguments(parser: argparse.ArgumentParser) -> None:
    """opgen's own: --dry-run, -o, -j and --torch-version."""
    add = parser.add_argument
    add("--dry-run", action="store_true", help="write no generated file (-o is still written)")
    add(
        "-o",
        "--output-dependencies",
        metavar="FILE",
        help="also write the list of generated files (a CMake set())",
    )
    add_jobs_argument(parser, "the files")
    add_torch_version_argument(parser)


def option_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The `AutogradDirOptions` fields of parsed arguments, for a target's options class."""
    jobs = getattr(args, "jobs", 1)  # commands without -j render in this process
    release = choose_release(args.torch_version, [args.native_functions, args.autograd])
    return {
        "native_yaml": args.native_functions,
        "tags_yaml": args.tags,
        "autograd_dir": args.autograd,
        "run": RunOptions(
            args.out,
            jobs=default_jobs() if jobs is None else jobs,
            dry_run=args.dry_run,
            output_dependencies=getattr(args, "output_dependencies", None),
            release=release.release,
            release_notice=release.notice,
        ),
    }


def generated(outputs: OutputSet, model: object) -> Generated:
    """What these generators produce: one set, which `-o` lists."""
    return Generated((outputs,), dependency_lists=(("", outputs),), model=model)
