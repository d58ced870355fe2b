"""Variations of torch's autograd inputs, built at test time, to test beyond torch's own spec.

Each variation is a directory laid out like torch's inputs (native_functions.yaml,
tags.yaml, and an autograd directory with derivatives.yaml, deprecated.yaml
and templates/), derived from the installed torchgen's packaged files:

- `trimmed`: native_functions.yaml cut down to the operators of KEPT_OPERATORS
  (with every entry they need to load: structured delegates and view_copy
  variants), derivatives.yaml cut down to the entries of the kept functions.
  Both are filtered entry by entry: the text is cut where a line starts with
  `- func:` / `- name:`, and kept entries keep their original text.
- `edited`: `trimmed`, plus the operators of data/autograd_variations/
  native_functions.yaml and, in derivatives.yaml, the entries of
  data/autograd_variations/derivatives.yaml (replacing the trimmed entry of the
  same schema, else appended) minus REMOVED_DERIVATIVES. Together they use
  every key and form of derivatives.yaml upstream accepts (`.sizes()`,
  `.size(n)` and `.strides()` it rejects, so they are not among them).

Nothing here is committed upstream text: the data files are written for opgen,
and torch's files are only copied into a temporary directory.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from .autograd_trees import AutogradInputs

DATA = Path(__file__).parent / "data" / "autograd_variations"

# Operators (names without overload and without the in-place `_`) the trimmed
# spec keeps, each with every overload, in-place and out variant. What each
# one brings, as torch 2.13's derivatives.yaml and native_functions.yaml define them:
KEPT_OPERATORS: tuple[str, ...] = (
    # functional / in-place / out groups, structured with delegates; `self, other:` keys
    "add",
    "sub",
    "mul",
    "div",
    "atan2",
    # `result: auto_element_wise` and handwritten `result:` formulas
    "abs",
    "neg",
    "exp",
    # views: view groups with view_copy, in-place views, multi-output views,
    # per-key formulas (AutogradNestedTensor), not_implemented
    "view",
    "transpose",
    "t",
    "select",
    "squeeze",
    "unbind",
    "split",
    "split_with_sizes",
    "chunk",
    "as_strided",
    "expand",
    "_neg_view",
    "alias",
    # dispatch sub-tables with AutogradNestedTensor and AutogradCUDA, also on a view
    "_test_autograd_multiple_dispatch",
    "_test_autograd_multiple_dispatch_view",
    "sum",
    "mean",
    # foreach ops: derived from add/mul/exp, and one with its own entry
    "_foreach_add",
    "_foreach_mul",
    "_foreach_exp",
    "_foreach_div",
    # multiple outputs: output_differentiability, named gradients (grad_min), grads[i]
    "max",
    "sort",
    "aminmax",
    "native_layer_norm",
    # grad_input_mask with retain_variables, mutable arguments, double backward
    "_batch_norm_with_update",
    "batch_norm_backward",
    # wrap_opt_if
    "_trilinear",
    # SymInt[] and optional tensors
    "convolution",
    "constant_pad_nd",
    # tensor lists and optional-tensor lists
    "cat",
    "stack",
    "index",
    # non_differentiable arguments; output_differentiability as a condition
    "scatter_reduce",
    "_new_zeros_with_same_feature_meta",
    "_to_copy",
    # factories with TensorOptions (variable_factories.h)
    "empty",
    "zeros",
    "ones",
    "full",
    "arange",
    "randn",
    "zeros_like",
    "_efficientzerotensor",
)


@dataclass(frozen=True)
class Entry:
    """One top-level entry of a YAML list, as text: from its `- key:` line to the next."""

    name: str  # the schema's operator name with overload, e.g. `add.out`
    text: str

    @property
    def operator(self) -> str:
        """The name without overload and without the in-place suffix: `add_.Tensor` -> `add`."""
        base = self.name.split(".")[0]
        if base.endswith("_") and not base.endswith("__"):
            return base[:-1]
        return base

    def field(self, key: str) -> str | None:
        found = re.search(rf"^  {key}: *(.*)$", self.text, re.MULTILINE)
        return found.group(1).strip() if found else None


def split_entries(text: str, key: str) -> tuple[str, list[Entry]]:
    """The text before the first entry, and the entries, cut where a line starts with `- key:`."""
    starts = [m.start() for m in re.finditer(rf"^- {key}:", text, re.MULTILINE)]
    header = text[: starts[0]] if starts else text
    entries = []
    for start, end in zip(starts, [*starts[1:], len(text)], strict=True):
        chunk = text[start:end]
        schema = chunk.split("\n", 1)[0].split(":", 1)[1].strip()
        entries.append(Entry(schema.split("(", 1)[0], chunk))
    return header, entries


def schema_of(entry: Entry) -> str:
    """The full schema of a `- name:` entry."""
    return entry.text.split("\n", 1)[0].split(":", 1)[1].strip()


def trim_native_functions(text: str, operators: Iterable[str]) -> str:
    """native_functions.yaml with only the entries of `operators` and what they need to load."""
    header, entries = split_entries(text, "func")
    wanted = set(operators)
    kept = {e.name for e in entries if e.operator in wanted}
    # A view's view_copy variant (`transpose_copy.int` of `transpose.int`) forms its view group.
    kept |= {
        e.name
        for e in entries
        if e.operator.endswith("_copy")
        and e.operator[: -len("_copy")] in wanted
        and "view_copy" in (e.field("tags") or "")
    }
    # Structured delegates, until nothing new is needed.
    by_name = {e.name: e for e in entries}
    pending = list(kept)
    while pending:
        delegate = by_name[pending.pop()].field("structured_delegate")
        if delegate is not None and delegate not in kept:
            kept.add(delegate)
            pending.append(delegate)
    return header + "".join(e.text for e in entries if e.name in kept)


def trim_derivatives(text: str, function_names: Iterable[str]) -> str:
    """derivatives.yaml with only the entries whose function is among `function_names`."""
    header, entries = split_entries(text, "name")
    names = set(function_names)
    return header + "".join(e.text for e in entries if e.name in names)


def edit_derivatives(text: str, edits: str, removed: Iterable[str]) -> str:
    """derivatives.yaml with `edits`' entries replacing those of the same schema (else appended)."""
    header, entries = split_entries(text, "name")
    _, replacements = split_entries(edits, "name")
    by_schema = {schema_of(e): e for e in replacements}
    drop = set(removed)
    out = []
    for e in entries:
        schema = schema_of(e)
        if schema in drop:
            continue
        out.append(by_schema.pop(schema, e).text)
    if out and not out[-1].endswith("\n\n"):
        out.append("\n")
    out.extend(e.text for e in replacements if schema_of(e) in by_schema)
    return header + "".join(out)


def _lay_out(root: Path, source: AutogradInputs, native: str, derivatives: str) -> AutogradInputs:
    """A directory laid out like torch's inputs, with these native and derivatives files."""
    native_dir = root / "native"
    autograd_dir = root / "autograd"
    native_dir.mkdir(parents=True)
    autograd_dir.mkdir(parents=True)
    (native_dir / "native_functions.yaml").write_text(native)
    shutil.copyfile(source.tags_yaml, native_dir / "tags.yaml")
    (autograd_dir / "derivatives.yaml").write_text(derivatives)
    shutil.copyfile(Path(source.autograd_dir) / "deprecated.yaml", autograd_dir / "deprecated.yaml")
    shutil.copytree(Path(source.autograd_dir) / "templates", autograd_dir / "templates")
    return AutogradInputs(
        str(native_dir / "native_functions.yaml"), str(native_dir / "tags.yaml"), str(autograd_dir)
    )


def _trimmed_texts(source: AutogradInputs) -> tuple[str, str]:
    native = trim_native_functions(Path(source.native_yaml).read_text(), KEPT_OPERATORS)
    kept = {e.name for e in split_entries(native, "func")[1]}
    derivatives = Path(source.autograd_dir, "derivatives.yaml").read_text()
    return native, trim_derivatives(derivatives, kept)


def trimmed(root: Path, source: AutogradInputs) -> AutogradInputs:
    native, derivatives = _trimmed_texts(source)
    return _lay_out(root, source, native, derivatives)


# Schemas whose entries the edited variation drops, so that upstream derives
# them: the in-place variant then reuses the out-of-place formula.
REMOVED_DERIVATIVES: tuple[str, ...] = (
    "transpose_(Tensor(a!) self, int dim0, int dim1) -> Tensor(a!)",
    "squeeze_.dim(Tensor(a!) self, int dim) -> Tensor(a!)",
)


def edited(root: Path, source: AutogradInputs) -> AutogradInputs:
    native, derivatives = _trimmed_texts(source)
    native += "\n" + (DATA / "native_functions.yaml").read_text()
    edits = (DATA / "derivatives.yaml").read_text()
    return _lay_out(root, source, native, edit_derivatives(derivatives, edits, REMOVED_DERIVATIVES))


VARIATIONS: dict[str, Callable[[Path, AutogradInputs], AutogradInputs]] = {
    "trimmed": trimmed,
    "edited": edited,
}
