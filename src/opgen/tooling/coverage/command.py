"""`opgen coverage SPEC --against OTHER`: how much of OTHER's operators SPEC implements.

The order reads as the question: "which of PyTorch's core operators does my
backend lack?" is `opgen coverage my_backend.yaml --against native_functions.yaml`;
"which tier-1 operators does my port miss?" is
`opgen coverage my_ops.txt --against native_functions.yaml --tier tier1.txt`.
SPEC and OTHER are each a spec, a backend YAML or a list of names
(`sources`). A backend YAML is read against a spec: OTHER if it is one, else
SPEC, else `--source-spec` (default: the installed torchgen's packaged spec).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, TextIO

from opgen.diagnostics import SpecError, write_diagnostics
from opgen.targets.contract import ToolCommand

if TYPE_CHECKING:
    from opgen.spec.model import Spec
    from opgen.tooling.coverage.sources import OperatorSet


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add(
        "spec",
        metavar="SPEC",
        help="what implements the operators: a spec, a backend YAML (its supported, autograd "
        "and full_codegen lists) or a file of operator names, one per line",
    )
    add(
        "--against",
        metavar="OTHER",
        required=True,
        help="the operators to cover: a spec (grouped by its tags), a backend YAML or a file "
        "of operator names",
    )
    add(
        "--tier",
        metavar="FILE",
        action="append",
        default=[],
        help="a file of operator names, reported as one group named after the file (repeatable)",
    )
    add("--tags", metavar="TAGS_YAML", help="OTHER's tags file (default: tags.yaml beside it)")
    add(
        "--source-spec",
        metavar="NATIVE_YAML",
        help="the spec a backend YAML is read against when neither SPEC nor OTHER is a spec "
        "(default: the installed torchgen's packaged native_functions.yaml)",
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


def _operator_sets(args: argparse.Namespace) -> tuple[OperatorSet, OperatorSet]:
    """SPEC's and OTHER's operators, each read as its kind requires."""
    from opgen.tooling.coverage.sources import kind_of

    kinds = {args.spec: kind_of(args.spec), args.against: kind_of(args.against)}
    base = _base_spec(args, kinds) if "backend" in kinds.values() else None
    implementation = _read(args.spec, kinds[args.spec], None, base)
    reference = _read(args.against, kinds[args.against], args.tags, base)
    args.retain((implementation, reference, base))
    return implementation, reference


def _base_spec(args: argparse.Namespace, kinds: Mapping[str, str]) -> tuple[str, Spec]:
    """The spec backend YAMLs are read against, fully checked: OTHER, SPEC or --source-spec."""
    from opgen.tooling.coverage.sources import read_spec

    for path, tags in ((args.against, args.tags), (args.spec, None)):
        if kinds[path] == "spec":
            return path, read_spec(path, tags, full=True)
    path = args.source_spec
    if path is None:
        from opgen.installed_torchgen import packaged_aten

        aten = packaged_aten()
        if aten is None:
            raise SpecError(
                "a backend YAML is read against a spec: pass --source-spec NATIVE_YAML "
                "(torchgen, whose packaged spec is the default, is not installed)"
            )
        path = os.path.join(aten, "native", "native_functions.yaml")
    return path, read_spec(path, None, full=True)


def _read(path: str, kind: str, tags: str | None, base: tuple[str, Spec] | None) -> OperatorSet:
    from opgen.tooling.coverage import sources

    if kind == "names":
        return sources.names_operators(path)
    if kind == "backend":
        assert base is not None
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
        "OTHER are each a spec (native_functions.yaml), a backend YAML or a text file of "
        "operator names."
    ),
    add_arguments=add_arguments,
    run=run_coverage,
)
