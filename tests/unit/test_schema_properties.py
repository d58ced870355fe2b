"""Properties of the schema parser and the spec loader, checked with hypothesis.

- Generated schemas, valid and invalid, are accepted by opgen exactly when
  upstream torchgen accepts them, and both print them back verbatim; the two
  also agree on the kind and signature of every accepted schema.
- No text whatever makes a parser, or the whole loader, raise anything but a
  `SpecError`, and a `SchemaError` points inside the text it was given.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, event, example, given, note, settings
from hypothesis import strategies as st

from opgen.diagnostics import SpecError
from opgen.spec import load_spec
from opgen.spec.arguments import Argument, Return
from opgen.spec.schema import FunctionSchema, OperatorName
from opgen.spec.syntax import SchemaError
from opgen.spec.types import Annotation, Type

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# -- generated schemas ----------------------------------------------------------------
#
# `schemas()` builds a valid schema (functional, view, inplace, out, mutable or
# scratch) the way real schemas are written, then, about seven times in ten,
# tries to break one rule of the language. So both valid and invalid schemas
# are common, and the invalid ones are near misses.

VALUE_TYPES = [
    "Tensor", "int", "SymInt", "float", "bool", "str", "Scalar", "ScalarType", "Layout",
    "Device", "DeviceIndex", "MemoryFormat", "QScheme", "Generator", "Storage", "Stream",
    "SymBool", "GraphModule", "DimVector",
    "__torch__.torch.classes.quantized.LinearPackedParamsBase",
]  # fmt: skip
RETURN_TYPES = ["Tensor", "Tensor", "Tensor[]", "int", "float", "bool", "SymInt", "Scalar"]
VIEW_ANNOTATIONS = ["a", "a -> *", "a|b", "b -> a|b"]
BAD_ANNOTATIONS = ["a|b!", "a!!", "A", "", "a -> b!", "a|b -> c|d", "a|b|c"]
DEFAULTS = [
    "None", "[]", "0", "1", "-1", "1e-05", "0.5", "True", "False", '"mean"',
    "contiguous_format", "[0,1]",
]  # fmt: skip
ARG_NAMES = ["other", "x", "y", "dim", "index", "weight", "alpha", "keepdim", "p", "eps"]
BASE_NAMES = ["add", "abs", "foo", "_foo", "foo_copy", "slice_scatter", "_foreach_abs", "and"]
OUT_NAMES = ["out", "values", "indices", "out2"]
TENSOR_OPTIONS = [
    "ScalarType? dtype=None", "Layout? layout=None", "Device? device=None",
    "bool? pin_memory=None",
]  # fmt: skip
KINDS = ["functional", "view", "inplace", "out", "mutable", "scratch"]
FAULTS = [
    "none", "none", "none", "none", "none", "none", "none", "none", "none", "none",
    "drop write", "wrong alias", "bad annotation", "annotated non-Tensor", "list size 0",
    "_out suffix", "functional overload", "TensorOptions", "kwarg after out", "lone star",
    "two stars", "mutable before self", "immutable self", "single return in parentheses",
    "returns without parentheses", "mixed returns", "return mutable positional", "no returns",
    "extra return", "trailing comma", "trailing comma without space", "duplicate name",
    "non-canonical list", "annotated sized list", "optional list of annotated",
    "wildcard on return",
]  # fmt: skip


@dataclass
class Arg:
    type: str
    name: str
    default: str | None = None

    def __str__(self) -> str:
        text = f"{self.type} {self.name}"
        return text if self.default is None else f"{text}={self.default}"


def _annotate(type_text: str, annotation: str) -> str:
    """`Tensor?` with `a!` -> `Tensor(a!)?`."""
    return type_text.replace("Tensor", f"Tensor({annotation})", 1)


@st.composite
def value_types(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(VALUE_TYPES))
    for _ in range(draw(st.integers(0, 2))):
        text += draw(st.sampled_from(["?", "[]", "[]", "[2]", "[1]", "[10]"]))
    return text


annotated_types = value_types() | st.builds(
    _annotate,
    st.sampled_from(["Tensor", "Tensor?", "Tensor[]", "Tensor?[]", "Tensor[1]", "int"]),
    st.sampled_from([*VIEW_ANNOTATIONS, "a!", *BAD_ANNOTATIONS]),
)


@st.composite
def plain_args(draw: st.DrawFn, names: list[str]) -> list[Arg]:
    return [Arg(draw(value_types()), n, draw(st.none() | st.sampled_from(DEFAULTS))) for n in names]


@dataclass
class Draft:
    name: str
    overload: str
    pre_self: list[Arg]
    self_arg: Arg | None
    positional: list[Arg]
    kwarg_only: list[str]
    outs: list[Arg]
    returns: list[str]
    parenthesize: bool = False
    star: str = "*"
    lone_star: bool = False
    trailing: str = ""

    def render(self) -> str:
        head = f"{self.name}.{self.overload}" if self.overload else self.name
        pieces = [str(a) for a in self.pre_self]
        pieces += [str(self.self_arg)] if self.self_arg is not None else []
        pieces += [str(a) for a in self.positional]
        after = self.kwarg_only + [str(o) for o in self.outs]
        if after:
            pieces += [self.star, *after]
        elif self.lone_star:
            pieces.append("*")
        returns = ", ".join(self.returns)
        if len(self.returns) != 1 or self.parenthesize:
            returns = f"({returns})"
        return f"{head}({', '.join(pieces)}{self.trailing}) -> {returns}"


@st.composite
def drafts(draw: st.DrawFn, kind: str) -> Draft:
    """A valid schema of the given kind."""
    base = draw(st.sampled_from(BASE_NAMES))
    dunder = base == "and"
    names = draw(st.lists(st.sampled_from(ARG_NAMES), unique=True, max_size=4))
    split = draw(st.integers(0, len(names)))
    positional = draw(plain_args(names[:split]))
    kwarg_only = [str(a) for a in draw(plain_args(names[split:]))]
    self_type = draw(st.sampled_from(["Tensor", "Tensor", "Tensor?", "Tensor[]"]))
    self_arg: Arg | None = Arg(self_type, "self")
    pre_self: list[Arg] = []
    if draw(st.integers(0, 5)) == 0:
        pre_self = [Arg("Tensor", "condition")]
    elif draw(st.integers(0, 5)) == 0:
        self_arg = None
    returns = [draw(st.sampled_from(RETURN_TYPES)) for _ in range(draw(st.integers(0, 3)))]
    draft = Draft(
        name=f"__{base}__" if dunder else base,
        overload=draw(st.sampled_from(["", "", "Tensor", "Scalar", "dim"])),
        pre_self=pre_self,
        self_arg=self_arg,
        positional=positional,
        kwarg_only=kwarg_only,
        outs=[],
        returns=returns,
    )
    if kind == "functional" and draw(st.booleans()):
        at = draw(st.integers(0, len(kwarg_only)))
        kwarg_only.insert(at, ", ".join(TENSOR_OPTIONS))
        draft.overload = draw(st.sampled_from(["", "functional", "names"]))
    elif kind == "view" and self_arg is not None:
        annotation = draw(st.sampled_from(VIEW_ANNOTATIONS))
        self_arg.type = _annotate("Tensor", annotation)
        returned = annotation.partition(" -> ")[0]  # '-> ...' is for arguments only
        draft.returns = [_annotate(draw(st.sampled_from(["Tensor", "Tensor[]"])), returned)]
    elif kind == "inplace":
        draft.name = f"__i{base}__" if dunder else f"{base}_"
        if self_arg is None:
            draft.self_arg = self_arg = Arg("Tensor", "self")
        self_arg.type = _annotate(draw(st.sampled_from(["Tensor", "Tensor", "Tensor[]"])), "a!")
        draft.returns = ["Tensor(a!)"] if self_arg.type == "Tensor(a!)" else []
    elif kind in ("out", "scratch"):
        draft.overload = draw(st.sampled_from(["out", "Tensor_out", "dim_values"]))
        n = draw(st.integers(1, 3))
        list_outs = draw(st.integers(0, 4)) == 0
        for i, name in enumerate(OUT_NAMES[:n]):
            draft.outs.append(
                Arg(_annotate("Tensor[]" if list_outs else "Tensor", f"{'abc'[i]}!"), name)
            )
        draft.returns = [] if list_outs else [o.type for o in draft.outs]
        if kind == "scratch":
            draft.outs.append(Arg("Tensor(z!)", "_scratch_tmp"))
    elif kind == "mutable":
        mutable = Arg(draw(st.sampled_from(["Tensor(b!)", "Tensor(b!)?", "Tensor(b!)[]"])), "state")
        positional.insert(draw(st.integers(0, len(positional))), mutable)
    if draft.returns and draw(st.integers(0, 3)) == 0:
        draft.returns = [
            f"{r} {n}" for r, n in zip(draft.returns, ["values", "indices", "rest"], strict=False)
        ]
    return draft


def _break(draft: Draft, fault: str, draw: st.DrawFn) -> None:
    """Break one rule, if the draft has what the fault needs (else leave it)."""
    args = [*draft.pre_self, *([draft.self_arg] if draft.self_arg else []), *draft.positional]
    tensors = [a for a in [*args, *draft.outs] if a.type.startswith("Tensor")]
    if fault == "drop write" and any("!" in a.type for a in [*args, *draft.outs]):
        victim = draw(st.sampled_from([a for a in [*args, *draft.outs] if "!" in a.type]))
        victim.type = victim.type.replace("!", "")
    elif fault == "wrong alias" and draft.returns:
        draft.returns[-1] = _annotate("Tensor", draw(st.sampled_from(["a", "b!", "c!", "z!"])))
    elif fault == "bad annotation" and tensors:
        victim = draw(st.sampled_from(tensors))
        victim.type = _annotate(
            victim.type.replace("(", "").split(")")[-1] or "Tensor",
            draw(st.sampled_from(BAD_ANNOTATIONS)),
        )
    elif fault == "annotated non-Tensor":
        draft.positional.append(Arg(draw(st.sampled_from(["int(a)", "Scalar(a!)"])), "nt"))
    elif fault == "list size 0":
        draft.positional.append(Arg(draw(st.sampled_from(["int[0]", "int[01]", "int[00]"])), "ls"))
    elif fault == "_out suffix":
        draft.name = draft.name.rstrip("_") + "_out"
    elif fault == "functional overload":
        draft.overload = "functional"
    elif fault == "TensorOptions":
        draft.kwarg_only.append(", ".join(TENSOR_OPTIONS))
    elif fault == "kwarg after out":
        draft.outs.append(Arg("int", "late"))
    elif fault == "lone star" and not (draft.kwarg_only or draft.outs):
        draft.lone_star = True
    elif fault == "two stars" and (draft.kwarg_only or draft.outs):
        draft.star = "*, *"
    elif fault == "mutable before self" and draft.self_arg is not None:
        draft.pre_self.insert(0, Arg("Tensor(y!)", "condition_"))
    elif fault == "immutable self" and draft.self_arg is not None:
        draft.self_arg.type = draft.self_arg.type.replace("(a!)", "")
    elif fault == "single return in parentheses" and len(draft.returns) == 1:
        draft.parenthesize = True
    elif fault == "returns without parentheses" and len(draft.returns) > 1:
        draft.returns = [", ".join(draft.returns)]
    elif fault == "mixed returns":
        draft.returns.append(draw(st.sampled_from(["Tensor", "Tensor(a!)"])))
    elif fault == "return mutable positional" and any("(b!)" in a.type for a in args):
        draft.returns.append("Tensor(b!)")
    elif fault == "no returns":
        draft.returns = []
    elif fault == "extra return":
        draft.returns.append(draw(st.sampled_from(RETURN_TYPES)))
    elif fault == "trailing comma":
        draft.trailing = ", "
    elif fault == "trailing comma without space":
        draft.trailing = ","
    elif fault == "duplicate name" and args:
        draft.positional.append(Arg("int", draw(st.sampled_from(args)).name))
    elif fault == "non-canonical list":
        draft.positional.append(
            Arg(draw(st.sampled_from(["int[ 2]", "int []", "int[2]?[", "Tensor??"])), "nc")
        )
    elif fault == "annotated sized list":
        draft.positional.append(Arg("Tensor(d)[2]", "asl"))
    elif fault == "wildcard on return":
        draft.returns.append("Tensor(a -> *)")
    elif fault == "optional list of annotated":
        draft.positional.append(Arg("Tensor(d)?[]", "ola"))


# Faults that torchgen lets through, printing the text back verbatim; opgen
# rejects them on purpose (see test_schema.py::test_stricter_than_torchgen).
STRICTER_THAN_TORCHGEN = frozenset(
    {"duplicate name", "trailing comma without space", "wildcard on return"}
)


@st.composite
def schemas(draw: st.DrawFn, faults: Sequence[str] = FAULTS) -> str:
    """Schema text: a valid schema of some kind, with one rule broken about half the time."""
    draft = draw(drafts(draw(st.sampled_from(KINDS))))
    _break(draft, draw(st.sampled_from(faults)), draw)
    return draft.render()


def _describe(schema: Any, kind: Any) -> tuple[str, ...]:
    return (
        str(schema),
        kind.name,
        str(schema.signature()),
        str(schema.signature(strip_default=True)),
        str(schema.signature(keep_return_names=True)),
        str(schema.view_signature()),
    )


@SETTINGS
@given(schemas([f for f in FAULTS if f not in STRICTER_THAN_TORCHGEN]))
@example("foo(Tensor self) -> Tensor")
@example("foo_(Tensor self) -> Tensor")
def test_generated_schemas_read_as_torchgen_reads_them(text: str) -> None:
    tg_model = pytest.importorskip("torchgen.model")
    note(text)
    try:
        ours = FunctionSchema.parse(text)
    except SchemaError as e:
        ours = None
        note(f"opgen: {e.message} @ {e.offset}")
    try:
        theirs = tg_model.FunctionSchema.parse(text)
    except Exception as e:  # torchgen signals bad input with assorted exceptions
        theirs = None
        note(f"torchgen: {type(e).__name__}: {e}")
    event("accepted" if ours is not None else "rejected")
    assert (ours is None) == (theirs is None), "opgen and torchgen disagree on acceptance"
    if ours is not None and theirs is not None:
        assert _describe(ours, ours.kind) == _describe(theirs, theirs.kind())
        assert str(ours) == text


@SETTINGS
@given(schemas())
def test_generated_schemas_round_trip(text: str) -> None:
    try:
        schema = FunctionSchema.parse(text)
    except SchemaError as e:
        assert 0 <= e.offset <= len(text)
        return
    assert str(schema) == text


# -- arbitrary text -----------------------------------------------------------------

SCHEMA_ALPHABET = "Tensor(a!)?[]*, ->=.:_ab1"
PARSERS: list[tuple[str, Callable[[str], object]]] = [
    ("FunctionSchema", FunctionSchema.parse),
    ("Type", Type.parse),
    ("Argument", Argument.parse),
    ("Return", Return.parse),
    ("Annotation", Annotation.parse),
    ("OperatorName", OperatorName.parse),
]

schemaish = st.one_of(
    st.text(),
    st.text(alphabet=SCHEMA_ALPHABET),
    # valid schemas, mangled: a piece cut out, or a character swapped
    st.tuples(
        schemas(), st.integers(0, 200), st.integers(0, 5), st.text(SCHEMA_ALPHABET, max_size=3)
    ).map(lambda t: t[0][: t[1]] + t[3] + t[0][t[1] + t[2] :]),
    # pieces of schemas
    annotated_types,
    st.builds(lambda t, n: f"{t} {n}", annotated_types, st.text(SCHEMA_ALPHABET, max_size=4)),
)


@pytest.mark.parametrize(("what", "parse"), PARSERS, ids=[w for w, _ in PARSERS])
@SETTINGS
@given(text=schemaish)
def test_parsers_raise_only_schema_errors(
    what: str, parse: Callable[[str], object], text: str
) -> None:
    try:
        parsed = parse(text)
    except SchemaError as e:
        assert 0 <= e.offset <= len(text), f"offset {e.offset} outside the text"
        event(f"{what}: rejected")
        return
    event(f"{what}: accepted")
    assert str(parsed) == text, "parse() accepted text it does not print back verbatim"


# -- the whole loader ---------------------------------------------------------------
#
# Documents are near misses of a valid spec: entries of opgen's bundled example
# library (which refer to each other: delegates, autogen, views and their
# copies), some of their keys replaced by odd values, dumped as YAML and, now
# and then, mangled as text.

EXAMPLES = Path(__file__).parents[2] / "src" / "opgen" / "examples"
EXAMPLE_ENTRIES: list[dict[str, Any]] = yaml.safe_load(
    (EXAMPLES / "native_functions.yaml").read_text()
)

KEYS = [
    "func", "variants", "dispatch", "tags", "structured", "structured_delegate",
    "structured_inherits", "precomputed", "autogen", "manual_kernel_registration",
    "manual_cpp_binding", "python_module", "category_override", "device_guard",
    "device_check", "use_const_ref_for_mutable_tensors", "cpp_no_default_args",
    "ufunc_inner_loop", "unknown",
]  # fmt: skip

STRINGS = [
    "function", "method", "function, method", "CPU", "CUDA", "CPU, CUDA", "CPU,",
    "CompositeImplicitAutograd", "CompositeExplicitAutograd", "Meta", "NoCheck", "ExactSame",
    "pointwise", "core", "inplace_view", "view_copy", "dynamic_output_shape", "generated",
    "fused_add.out", "softclip.out", "fused_add.Scalar_out", "foo", "foo_out",
    "at::native::foo", "a::b::c::d::foo", "TensorIteratorBase", "dim -> int dim",
    "dim -> int dim, bool keepdim", "int extra", "alpha", "limit", "Generic", "ScalarOnly",
    "CPUScalar", "add (AllAndComplex, BFloat16, Half)", "True", "", "demo::",
]  # fmt: skip

scalars = st.one_of(
    st.sampled_from(STRINGS),
    schemas(),
    st.booleans(),
    st.integers(-2, 2),
    st.none(),
    st.text(max_size=8),
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(STRINGS + KEYS), inner, max_size=3)
    ),
    max_leaves=6,
)


OP_NAMES = [
    "fused_add.out", "fused_add.Scalar_out", "softclip.out", "sum_sq.out", "absmax.dim_out",
    "mean_std.out", "expand_dims", "foo.out", "fused_add", "softclip_",
]  # fmt: skip
TAGS = [
    "core", "pointwise", "reduction", "view_copy", "inplace_view", "nondeterministic_seeded",
    "out", "generated", "bogus",
]  # fmt: skip
DISPATCH_KEYS = [
    "CPU", "CUDA", "CPU, CUDA", "CPU,", "Meta", "MPS", "SparseCPU", "QuantizedCPU",
    "CompositeImplicitAutograd", "CompositeExplicitAutograd",
    "CompositeImplicitAutogradNestedTensor", "CompositeExplicitAutogradNonFunctional",
    "Autograd", "Bogus",
]  # fmt: skip
KERNELS = [
    "foo",
    "foo_out",
    "fused_add_out",
    "softclip_out",
    "at::native::foo",
    "a::b::c::d::foo",
    "",
]

# For each key, values of roughly the right shape (values: anything at all).
KEY_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "func": schemas(),
    "variants": st.sampled_from(
        ["function", "method", "function, method", "method, function", "fn"]
    ),
    "dispatch": st.dictionaries(
        st.sampled_from(DISPATCH_KEYS), st.sampled_from(KERNELS), max_size=3
    ),
    "tags": st.sampled_from(TAGS) | st.lists(st.sampled_from(TAGS), max_size=3),
    "structured": st.booleans(),
    "structured_delegate": st.sampled_from(OP_NAMES),
    "structured_inherits": st.sampled_from(["TensorIteratorBase", "at::Foo"]),
    "precomputed": st.lists(
        st.sampled_from(["dim -> int dim", "dim -> int dim, bool keepdim", "int extra", "x -> y"]),
        max_size=3,
    ),
    "autogen": st.sampled_from(OP_NAMES)
    | st.lists(st.sampled_from(OP_NAMES), max_size=2).map(", ".join),
    "manual_kernel_registration": st.booleans(),
    "manual_cpp_binding": st.booleans(),
    "python_module": st.sampled_from(["nn", "linalg", "special"]),
    "category_override": st.sampled_from(["dummy", "factory"]),
    "device_guard": st.booleans(),
    "device_check": st.sampled_from(["NoCheck", "ExactSame", "Bogus"]),
    "use_const_ref_for_mutable_tensors": st.booleans(),
    "cpp_no_default_args": st.lists(st.sampled_from(["alpha", "limit", "dim", "self"]), max_size=2),
    "ufunc_inner_loop": st.dictionaries(
        st.sampled_from(["Generic", "ScalarOnly", "CUDAFunctor", "CPUScalar", "Bogus"]),
        st.sampled_from(
            ["add (AllAndComplex, BFloat16, Half)", "add (Bogus)", "add", "sub (Half)"]
        ),
        max_size=2,
    ),
    "unknown": values,
}


@st.composite
def entries(draw: st.DrawFn) -> dict[str, Any]:
    if draw(st.integers(0, 4)) == 0:
        entry: dict[str, Any] = {"func": draw(schemas())}
    else:
        entry = dict(draw(st.sampled_from(EXAMPLE_ENTRIES)))
    for _ in range(draw(st.integers(0, 2))):
        key = draw(st.sampled_from(KEYS))
        how = draw(st.integers(0, 5))
        if how == 0:
            entry.pop(key, None)
        elif how == 1:
            entry[key] = draw(values)
        else:
            entry[key] = draw(KEY_VALUES[key])
    return entry


@st.composite
def example_subsets(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Most of the example library, so that entries find the entries they refer to."""
    kept = [e for e in EXAMPLE_ENTRIES if draw(st.integers(0, 29)) != 0]
    for _ in range(draw(st.integers(0, 2))):
        kept.insert(draw(st.integers(0, len(kept))), draw(entries()))
    return kept


@st.composite
def documents(draw: st.DrawFn) -> str:
    text = yaml.safe_dump(
        draw(st.lists(entries(), max_size=6) | example_subsets()), sort_keys=False
    )
    if draw(st.integers(0, 4)) == 0:  # mangle the text
        at = draw(st.integers(0, len(text)))
        cut = draw(st.integers(0, 5))
        text = (
            text[:at] + draw(st.text(alphabet="- :\n'\"[]{},&*!|>#", max_size=3)) + text[at + cut :]
        )
    return text


yamlish = st.one_of(
    documents(),
    st.text(),
    st.text(alphabet="- :\n'\"[]{},&*!|>#?<func"),
)


@pytest.fixture(scope="module")
def spec_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("spec")
    (d / "tags.yaml").write_text((EXAMPLES / "tags.yaml").read_text())
    return d


def _load(spec_dir: Path, text: str) -> tuple[str, str]:
    """('accepted', summary) or ('rejected', error); any other exception propagates."""
    native = spec_dir / "native_functions.yaml"
    native.write_text(text, encoding="utf-8")
    try:
        spec = load_spec(str(native), str(spec_dir / "tags.yaml"))
    except SpecError as e:
        assert e.diagnostics
        return "rejected", str(e)
    return "accepted", f"{len(spec.functions)} functions"


def _event(outcome: tuple[str, str]) -> None:
    event(outcome[0])
    note(outcome[1])


# Inputs that once crashed the loader (TypeError: unhashable 'YamlList' from a
# set lookup; RuntimeError: StopIteration escaping a generator in autogen when a
# group holds only a scratch variant), with what should happen instead.
FORMER_CRASHES = {
    "list as a tag": ("- func: foo(Tensor self) -> Tensor\n  tags: [[]]\n", "rejected"),
    "list as a cpp_no_default_args name": (
        "- func: foo(Tensor self) -> Tensor\n  cpp_no_default_args: [[]]\n",
        "rejected",
    ),
    "scratch operator alone": (  # torchgen reads this spec
        "- func: foo.out(Tensor self, *, Tensor(a!) out, Tensor(z!) _scratch_tmp) -> Tensor(a!)\n"
        "  dispatch: {CPU: foo_out}\n",
        "accepted",
    ),
}


@pytest.mark.parametrize(("text", "outcome"), FORMER_CRASHES.values(), ids=list(FORMER_CRASHES))
def test_former_loader_crash(spec_dir: Path, text: str, outcome: str) -> None:
    assert _load(spec_dir, text)[0] == outcome


def test_example_spec_loads(spec_dir: Path) -> None:
    outcome, detail = _load(spec_dir, (EXAMPLES / "native_functions.yaml").read_text())
    assert outcome == "accepted", detail


@SETTINGS
@given(text=yamlish)
@example(text=FORMER_CRASHES["list as a tag"][0])
@example(text=FORMER_CRASHES["list as a cpp_no_default_args name"][0])
@example(text=FORMER_CRASHES["scratch operator alone"][0])
def test_loader_raises_only_spec_errors(spec_dir: Path, text: str) -> None:
    _event(_load(spec_dir, text))
