"""`opgen coverage SPEC --against OTHER`: how much of OTHER's operators SPEC implements.

The order reads as the question: "which of PyTorch's core operators does my
backend lack?" is `opgen coverage my_backend.yaml --against native_functions.yaml`;
"which tier-1 operators does my port miss?" is
`opgen coverage my_ops.txt --against native_functions.yaml --tier tier1.txt`.
SPEC and OTHER are each a spec, a backend YAML or a list of names
(`sources`), and SPEC may be a lowering spec, whose files are read together:
"which core operators does my lowering lack?" is `opgen coverage lowering/*.yaml`,
OTHER then defaulting to the installed torchgen's packaged spec. A backend YAML or a
lowering spec is read against a spec: OTHER if it is one, else SPEC, else
`--source-spec` (default: the installed torchgen's packaged spec). With `--library`
or `--mlx`, SPEC, and OTHER when it is a spec, are custom-op library specs or MLX
extension specs ("which operators of my library's last release does this one lack?" is
`opgen coverage mylib.yaml --against mylib_v1.yaml --library`).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, TextIO

from opgen.diagnostics import SpecError, write_diagnostics
from opgen.targets.contract import ToolCommand
from opgen.tooling.dialects import add_dialect_arguments, dialect_of

if TYPE_CHECKING:
    from opgen.spec.model import Spec
    from opgen.tooling.coverage.sources import OperatorSet


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add(
        "spec",
        metavar="SPEC",
        nargs="+",
        help="what implements the operators: a spec, a backend YAML (its supported, autograd "
        "and full_codegen lists), a file of operator names, one per line, or the files of a "
        "lowering spec (opgen aten-mlx's), read together",
    )
    add(
        "--against",
        metavar="OTHER",
        help="the operators to cover: a spec (grouped by its tags), a backend YAML or a file "
        "of operator names (required, but for a lowering spec: default, the installed "
        "torchgen's packaged native_functions.yaml)",
    )
    add(
        "--tier",
        metavar="FILE",
        action="append",
        default=[],
        help="a file of operator names, reported as one group named after the file (repeatable)",
    )
    add_dialect_arguments(parser, "SPEC, and OTHER when it is a spec,")
    add("--tags", metavar="TAGS_YAML", help="OTHER's tags file (default: tags.yaml beside it)")
    add(
        "--source-spec",
        metavar="NATIVE_YAML",
        help="the spec a backend YAML or a lowering spec is read against when neither SPEC "
        "nor OTHER is a spec (default: the installed torchgen's packaged "
        "native_functions.yaml)",
    )
    add("--format", choices=("text", "json", "markdown"), default="text", help="output format")
    add(
        "--all",
        action="store_true",
        help="text: list every missing operator, one per line, not the first few of each "
        "group (markdown and json always list every one)",
    )


def run_coverage(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from opgen.tooling.coverage import report
    from opgen.tooling.coverage.measure import measure, tier_warnings
    from opgen.tooling.coverage.sources import names_operators

    problem = _usage_problem(args)
    if problem is not None:
        err.write(f"opgen coverage: error: {problem}\n")
        return 2
    implementation, reference = _operator_sets(args)
    tiers = [(_tier_name(path), names_operators(path)) for path in args.tier]
    coverage = measure(implementation, reference, tiers)
    if args.format == "json":
        lines = report.json_lines(coverage)
    elif args.format == "markdown":
        lines = report.markdown_lines(coverage)
    else:
        lines = report.text_lines(coverage, None if args.all else report.EXAMPLES_PER_GROUP)
    for line in lines:
        out.write(line + "\n")
    write_diagnostics(tier_warnings(reference, tiers), err)
    return 0


def _usage_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the flags, before anything is read (exit status 2). SPEC's
    several files and a missing --against are a lowering spec's alone."""
    from opgen.tooling.coverage.sources import kind_of

    if len(args.spec) == 1 and args.against is not None:
        return None
    kinds = {path: kind_of(path, dialect_of(args)) for path in args.spec}
    others = [path for path, kind in kinds.items() if kind != "lowering"]
    if others and len(args.spec) > 1:
        kind = {
            "spec": "a spec",
            "library": "a library spec",
            "mlx": "an MLX spec",
            "backend": "a backend YAML",
            "names": "a list of names",
        }
        return (
            f"{others[0]} is {kind[kinds[others[0]]]}, and only a lowering spec's files are "
            "read together: name one SPEC"
        )
    if args.against is None and others:
        return "the following arguments are required: --against"
    if args.against is None and _packaged_spec() is None:
        return (
            "a lowering spec is covered against torchgen's packaged spec by default, and "
            "torchgen is not installed: pass --against NATIVE_YAML"
        )
    return None


def _packaged_spec() -> str | None:
    """The installed torchgen's packaged native_functions.yaml, if torchgen is installed."""
    from opgen.installed_torchgen import packaged_aten

    aten = packaged_aten()
    return None if aten is None else os.path.join(aten, "native", "native_functions.yaml")


def _operator_sets(args: argparse.Namespace) -> tuple[OperatorSet, OperatorSet]:
    """SPEC's and OTHER's operators, each read as its kind requires."""
    from opgen.tooling.coverage.sources import kind_of

    against = args.against or _packaged_spec()
    assert against is not None  # _usage_problem
    spec = args.spec[0]
    dialect = dialect_of(args)
    kinds = {spec: kind_of(spec, dialect), against: kind_of(against, dialect)}
    read_against = ("backend", "lowering")
    base = _base_spec(args, against, kinds) if set(kinds.values()) & set(read_against) else None
    if kinds[spec] == "lowering":
        from opgen.tooling.coverage.sources import lowering_operators

        assert base is not None
        implementation = lowering_operators(args.spec, base[1])
    else:
        implementation = _read(spec, kinds[spec], None, base)
    reference = _read(against, kinds[against], args.tags, base)
    args.retain((implementation, reference, base))
    return implementation, reference


def _base_spec(
    args: argparse.Namespace, against: str, kinds: Mapping[str, str]
) -> tuple[str, Spec]:
    """The spec backend YAMLs and lowering specs are read against, fully checked: OTHER,
    SPEC or --source-spec."""
    from opgen.tooling.coverage.sources import read_spec

    for path, tags in ((against, args.tags), (args.spec[0], None)):
        if kinds[path] == "spec":
            return path, read_spec(path, tags, full=True)
    path = args.source_spec or _packaged_spec()
    if path is None:
        raise SpecError(
            "a backend YAML or a lowering spec is read against a spec: pass --source-spec "
            "NATIVE_YAML (torchgen, whose packaged spec is the default, is not installed)"
        )
    return path, read_spec(path, None, full=True)


def _read(path: str, kind: str, tags: str | None, base: tuple[str, Spec] | None) -> OperatorSet:
    from opgen.tooling.coverage import sources

    if kind == "names":
        return sources.names_operators(path)
    if kind == "library":
        return sources.library_operators(path, tags)
    if kind == "mlx":
        return sources.mlx_operators(path)
    if kind in ("backend", "lowering"):
        assert base is not None
        if kind == "lowering":
            return sources.lowering_operators([path], base[1])
        return sources.backend_operators(path, base[1])
    if base is not None and base[0] == path:
        return sources.spec_operators(path, base[1])
    return sources.spec_operators(path, sources.read_spec(path, tags, full=False))


def _tier_name(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


TOOL = ToolCommand(
    name="coverage",
    help="how much of another spec's operators a spec or backend implements",
    description=(
        "How much of OTHER's operators SPEC implements, grouped by tag and by tier, with the "
        "missing operators (in text, the first few of each group; --all: every one). SPEC and "
        "OTHER are each a spec (native_functions.yaml; with --library or --mlx, a library or "
        "MLX spec), a backend YAML or a text file of operator names; SPEC may be a lowering "
        "spec's files (opgen aten-mlx's), with what it leaves out and why, covering torch's "
        "spec unless --against names another."
    ),
    add_arguments=add_arguments,
    run=run_coverage,
)
