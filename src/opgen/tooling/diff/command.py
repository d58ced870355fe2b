"""`opgen diff OLD NEW`: compatibility breaks between two specs, with PyTorch's rules.

Both specs are read for comparison (`LoadOptions(for_comparison=True)`): what
older PyTorch specs allowed and later ones forbid (the `Dimname` types, rules
added since, tags outside the tags file) is read, not rejected; `opgen check`
keeps rejecting it. With `--library` both are custom-op library specs, with `--mlx`
MLX extension specs (`mlx_findings`); their schemas are judged by the same rules, and a
spec read without the flag its dialect needs is told as such (`opgen.tooling.dialects`).
Findings go to stdout (`report`: in text, every break
and a few informational findings of each kind, or every finding with `--all`;
JSON always has every one), allowlist warnings to stderr; the exit status is 1
when a backward- or forward-incompatible finding is not allowed, else 0.
"""

from __future__ import annotations

import argparse
import datetime
import os
from typing import TYPE_CHECKING, TextIO

from opgen.diagnostics import write_diagnostics
from opgen.targets.contract import ToolCommand
from opgen.tooling.dialects import Dialect, add_dialect_arguments, dialect_of, read_as

if TYPE_CHECKING:
    from opgen.tooling.diff.findings import Finding


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add(
        "old",
        metavar="OLD",
        help="the old spec (native_functions.yaml; with --library or --mlx, that kind of spec)",
    )
    add("new", metavar="NEW", help="the new spec")
    add("--old-tags", metavar="TAGS_YAML", help="OLD's tags file (default: tags.yaml beside it)")
    add("--new-tags", metavar="TAGS_YAML", help="NEW's tags file (default: tags.yaml beside it)")
    add_dialect_arguments(parser, "both specs")
    add("--format", choices=("text", "json"), default="text", help="output format (default text)")
    add(
        "--all",
        action="store_true",
        help="text: list every informational finding, not the first few of each kind "
        "(breaks are always listed in full; json always has every finding)",
    )
    add(
        "--allow",
        metavar="ALLOWLIST_YAML",
        help="allowed breaks: entries with name (or pattern), category, reason and until",
    )
    add(
        "--today",
        metavar="YYYY-MM-DD",
        type=_date,
        help="the date allowlist entries expire against (default: today)",
    )


def _date(text: str) -> datetime.date:
    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a date YYYY-MM-DD, not '{text}'") from None


def run_diff(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from opgen.tooling.diff.allowlist import NO_ALLOWLIST, load_allowlist
    from opgen.tooling.diff.report import EXAMPLES_PER_KIND, is_failure, json_lines, text_lines

    today = args.today or datetime.date.today()
    allowlist = NO_ALLOWLIST if args.allow is None else load_allowlist(args.allow, today)
    dialect = dialect_of(args)
    findings = _mlx_findings(args) if dialect == "mlx" else _spec_findings(args, dialect)
    unused = allowlist.unused(findings)
    if args.format == "json":
        lines = json_lines(findings, allowlist)
    else:
        examples = None if args.all else EXAMPLES_PER_KIND
        lines = text_lines(findings, allowlist, examples, warnings=len(unused))
    for line in lines:
        out.write(line + "\n")
    write_diagnostics(unused, err)
    return int(any(is_failure(f, allowlist.allowing(f)) for f in findings))


def _spec_findings(args: argparse.Namespace, dialect: Dialect) -> list[Finding]:
    """The findings between two PyTorch specs, or two library specs."""
    from opgen.spec.model import LoadOptions, load_spec
    from opgen.tooling.diff.findings import diff_specs

    options = LoadOptions(library=dialect == "library", for_comparison=True)
    old_tags, new_tags = _tags(args.old, args.old_tags), _tags(args.new, args.new_tags)
    old = read_as(dialect, args.old, "diff", lambda: load_spec(args.old, old_tags, options))
    new = read_as(dialect, args.new, "diff", lambda: load_spec(args.new, new_tags, options))
    args.retain((old, new))
    return diff_specs(old, new)


def _mlx_findings(args: argparse.Namespace) -> list[Finding]:
    """The findings between two MLX specs, each read as `opgen mlx` reads it."""
    from opgen.spec.mlx.reader import load_mlx_library
    from opgen.tooling.diff.mlx_findings import diff_mlx_specs

    old = read_as("mlx", args.old, "diff", lambda: load_mlx_library(args.old))
    new = read_as("mlx", args.new, "diff", lambda: load_mlx_library(args.new))
    args.retain((old, new))
    return diff_mlx_specs(old, new)


def _tags(native: str, tags: str | None) -> str | None:
    if tags is not None:
        return tags
    beside = os.path.join(os.path.dirname(native), "tags.yaml")
    return beside if os.path.isfile(beside) else None


TOOL = ToolCommand(
    name="diff",
    help="compatibility breaks between two specs, by PyTorch's rules",
    description=(
        "Compare two specs operator by operator: every change, located in both files, as "
        "backward-incompatible, forward-incompatible (as PyTorch's schema checks decide) or "
        "informational. Text lists every break, then a few findings of each informational kind "
        "(--all: every one). Exit status 1 when a break is not allowed."
    ),
    add_arguments=add_arguments,
    run=run_diff,
)
