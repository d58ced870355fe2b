"""Named dimensions (`Dimname`) through every layer, for the releases that have them.

torch 2.10 to 2.12 name tensor dimensions: their specs use `Dimname`, `Dimname[1]`,
`Dimname[]` and `Dimname[]?` (`releases.NAMED_DIMENSIONS`; torchgen also reads
`Dimname?`), and their structured kernels give named outputs their names
(`OUTPUT_NAME_PROPAGATION`). torch 2.13 removed both: its rules reject the type
where it is written. Each case reads a small spec under 2.12's rules and checks
the exact text one layer makes of it, as torchgen 2.12 writes it
(tests/conformance/test_releases.py compares whole trees on each release's spec).
"""

from __future__ import annotations

import dataclasses
import io
import textwrap
from pathlib import Path

import pytest

from opgen.api import cpp, pyi, python, structured
from opgen.api.cpp import CppSignatureGroup
from opgen.api.dispatcher import DispatcherSignature
from opgen.api.native import NativeSignature
from opgen.api.signatures import SignatureSet
from opgen.api.types import ArgumentStyle
from opgen.cli import build_parser, main
from opgen.diagnostics import SpecError, write_diagnostics
from opgen.python_bindings.bound import (
    is_py_torch_function,
    is_py_variable_method,
    should_generate_py_binding,
)
from opgen.python_bindings.dispatch import arg_parser_unpack_method
from opgen.python_bindings.overloads import group_by_name, group_overloads, load_signatures
from opgen.releases import Release
from opgen.spec import LoadOptions, Spec, load_spec
from opgen.spec.compat.values import fake_name, is_subtype
from opgen.spec.keys import DispatchKey
from opgen.spec.native import NativeFunction
from opgen.spec.schema import FunctionSchema
from opgen.spec.syntax import SchemaError
from opgen.spec.types import BaseTy, BaseType, Type
from opgen.targets.aten.aoti_abi import Unsupported, convert
from opgen.targets.aten.declarations_yaml import DeclarationWriter, dynamic_type
from opgen.targets.aten.dispatch_plan import KernelTable
from opgen.targets.aten.structured_kernels import StructuredWrappers
from opgen.targets.autograd.annotated_fn_args import required_arguments
from opgen.targets.lazy.command import options_from as lazy_options
from opgen.targets.lazy.generate import read as read_lazy
from opgen.targets.python.method_impl import method_impl

TAGS = Path(__file__).parents[1] / "malformed" / "tags.yaml"
RELEASE_2_12 = Release(2, 12)
RELEASE_2_13 = Release(2, 13)
PLAIN = ArgumentStyle()
HINTS = pyi.hints_for(RELEASE_2_12)

# Every form of the type, one argument each.
EVERY_FORM = (
    "foo(Tensor self, Dimname a, Dimname? b, Dimname[1] c, Dimname[] d, Dimname[]? e=None)"
    " -> Tensor"
)
FORMS = ("Dimname", "Dimname?", "Dimname[1]", "Dimname[]", "Dimname[]?")


def write_spec(directory: Path, text: str) -> Path:
    path = directory / "native_functions.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def spec_for(directory: Path, text: str, release: Release = RELEASE_2_12) -> Spec:
    return load_spec(str(write_spec(directory, text)), None, LoadOptions(release=release))


def function(directory: Path, schema: str) -> NativeFunction:
    return spec_for(directory, f"- func: {schema}\n").functions[0]


def named(text: str) -> Type:
    return Type.parse(text, named_dimensions=True)


# -- the spec ---------------------------------------------------------------------------


def test_2_12_reads_every_form_and_prints_it_back(tmp_path: Path) -> None:
    f = function(tmp_path, EVERY_FORM)
    assert str(f.func) == EVERY_FORM
    assert [a.type.base_ty for a in f.func.arguments.flat_non_out[1:]] == [BaseTy.Dimname] * 5
    assert named("Dimname") == BaseType(BaseTy.Dimname)


def test_2_13_rejects_dimname_where_it_is_written(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, "- func: softmax.Dimname(Tensor self, Dimname dim) -> Tensor\n")

    def check(release: Release) -> tuple[int, str]:
        err = io.StringIO()
        argv = ["check", str(spec), "--tags", str(TAGS), "--torch-version", str(release)]
        status = main(argv, io.StringIO(), err)
        return status, err.getvalue().replace(str(tmp_path), "$DIR")

    # 2.12 is not offered on the command line yet (not byte-identical everywhere).
    load_spec(str(spec), str(TAGS), LoadOptions(release=RELEASE_2_12))
    assert check(RELEASE_2_13) == (
        1,
        "$DIR/native_functions.yaml:1:38: error: unknown type 'Dimname'\n"
        "  - func: softmax.Dimname(Tensor self, Dimname dim) -> Tensor\n"
        "                                       ^~~~~~~\n",
    )


@pytest.mark.parametrize("text", ["Dimname[]? names", "Tensor self, Dimname dim"])
def test_a_schema_reads_dimname_only_when_asked(text: str) -> None:
    schema = f"foo({text}) -> Tensor"
    assert str(FunctionSchema.parse(schema, named_dimensions=True)) == schema
    with pytest.raises(SchemaError) as raised:
        FunctionSchema.parse(schema)
    assert (raised.value.message, raised.value.offset) == (
        "unknown type 'Dimname'",
        schema.index("Dimname"),
    )


def test_comparison_sees_a_dimname_as_a_str() -> None:
    """torch's schema parser makes `Dimname` a `str` (its fake type) for `opgen diff`."""
    assert fake_name(named("Dimname")) == "str"
    assert is_subtype(named("Dimname"), Type.parse("str?"))
    assert not is_subtype(named("Dimname[]"), Type.parse("int[]"))


# -- C++ ----------------------------------------------------------------------------------


def test_cpp_dispatcher_and_native_signatures(tmp_path: Path) -> None:
    f = function(tmp_path, EVERY_FORM)
    parameters = (
        "const at::Tensor & self, at::Dimname a, ::std::optional<at::Dimname> b, "
        "at::DimnameList c, at::DimnameList d, ::std::optional<at::DimnameList> e"
    )
    group = CppSignatureGroup.from_native_function(f, method=False)
    assert group.signature.decl() == f"at::Tensor foo({parameters}=::std::nullopt)"
    assert DispatcherSignature(f.func, PLAIN).decl() == f"at::Tensor foo({parameters})"
    assert NativeSignature(f.func, False, PLAIN).decl() == (
        f"at::Tensor foo({parameters}=::std::nullopt)"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Dimname", "at::Dimname"),
        ("Dimname?", "::std::optional<at::Dimname>"),
        ("Dimname[1]", "at::DimnameList"),
        ("Dimname[]", "at::DimnameList"),
        ("Dimname[]?", "::std::optional<at::DimnameList>"),
    ],
)
def test_owning_and_structured_types_keep_the_dimname_list(text: str, expected: str) -> None:
    t = named(text)
    owning = cpp.argument_ctype(t, mutable=False, symint=False, style=PLAIN, owning=True)
    assert owning.cpp_type() == expected
    assert structured.argument_ctype(t, mutable=False).cpp_type() == expected


def test_returned_names_are_values() -> None:
    returned = [cpp.return_ctype(named(t), mutable=False, style=PLAIN) for t in FORMS[::3]]
    assert [t.cpp_type() for t in returned] == ["at::Dimname", "::std::vector<at::Dimname>"]


def test_declarations_yaml_names_the_dimname_list(tmp_path: Path) -> None:
    f = function(tmp_path, "rename(Tensor(a) self, Dimname[]? names) -> Tensor(a)")
    names = f.func.arguments.flat_non_out[1]
    assert dynamic_type(names.type, PLAIN) == "at::DimnameList"
    assert DeclarationWriter().argument(names, False, False, None, PLAIN) == (
        "  - annotation: null\n"
        "    dynamic_type: at::DimnameList\n"
        "    is_nullable: true\n"
        "    name: names\n"
        "    type: ::std::optional<at::DimnameList>\n",
        "::std::optional<at::DimnameList>",
    )


def test_the_aoti_shim_cannot_pass_a_dimname() -> None:
    """An operator with a Dimname gets no AOTInductor shim, as upstream's skips it."""
    for text in FORMS:
        with pytest.raises(Unsupported):
            convert(named(text), "dim")


# -- Python -------------------------------------------------------------------------------


def test_python_parser_and_pyi_signatures(tmp_path: Path) -> None:
    sig = python.signature(function(tmp_path, EVERY_FORM))
    assert sig.signature_str() == (
        "foo(Tensor input, Dimname a, Dimname? b, DimnameList[1] c, DimnameList d, "
        "DimnameList? e=None)"
    )
    assert sig.signature_str_pyi(HINTS) == (
        "def foo(\n"
        "    input: Tensor,\n"
        "    a: str | EllipsisType | None,\n"
        "    b: str | EllipsisType | None,\n"
        "    c: Sequence[str | EllipsisType | None],\n"
        "    d: Sequence[str | EllipsisType | None],\n"
        "    e: Sequence[str | EllipsisType | None] | None = None,\n"
        ") -> Tensor: ..."
    )


@pytest.mark.parametrize(
    ("text", "method", "returned"),
    [
        ("Dimname", "dimname", "str | None"),
        ("Dimname?", "dimnameOptional", "str | None"),
        ("Dimname[1]", "dimnamelist", "tuple[str | None, ...]"),
        ("Dimname[]", "dimnamelist", "tuple[str | None, ...]"),
        ("Dimname[]?", "toDimnameListOptional", "tuple[str | None, ...] | None"),
    ],
)
def test_unpack_methods_and_returned_hints(text: str, method: str, returned: str) -> None:
    t = named(text)
    default = "None" if text.endswith("?") else None
    assert arg_parser_unpack_method(t, default, None) == method
    assert pyi.return_type_str(t, HINTS) == returned


def test_an_optional_name_list_is_rewrapped_before_the_call(tmp_path: Path) -> None:
    spec = spec_for(
        tmp_path,
        """\
        - func: rename(Tensor(a) self, Dimname[]? names) -> Tensor(a)
          variants: method
        """,
    )
    signatures = SignatureSet()
    pairs = load_signatures(list(spec.functions), (), signatures, method=True)
    ((name, overloads),) = group_by_name(pairs, is_py_variable_method).items()
    text = method_impl(name, None, overloads, signatures, method=True)
    assert '    "rename(DimnameList? names)",\n' in text
    assert text[text.index("  // aten::rename") :] == (
        "  // aten::rename(Tensor(a) self, Dimname[]? names) -> Tensor(a)\n"
        "  auto __names = _r.toDimnameListOptional(0);\n"
        "  ::std::optional<DimnameList> names = __names ? "
        "::std::make_optional(DimnameList(__names.value())) : ::std::nullopt;\n"
        "  auto dispatch_rename = [](const at::Tensor & self, "
        "::std::optional<at::DimnameList> names) -> at::Tensor {\n"
        "    pybind11::gil_scoped_release no_gil;\n"
        "    return self.rename(names);\n"
        "  };\n"
        "  return wrap(dispatch_rename(self, names));\n"
        "  Py_RETURN_NONE;\n"
        "  END_HANDLE_TH_ERRORS\n"
        "}\n"
        "\n"
    )


LOGSUMEXP = """\
- func: logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor
- func: logsumexp.names(Tensor self, Dimname[1] dim, bool keepdim=False) -> Tensor
"""


def test_a_named_dimension_overload_is_tried_last(tmp_path: Path) -> None:
    spec = spec_for(tmp_path, LOGSUMEXP)
    functions = [f for f in spec.functions if should_generate_py_binding(f)]
    pairs = load_signatures(functions, (), SignatureSet(), method=False)
    (grouped,) = group_by_name(pairs, is_py_torch_function).values()
    # By text alone `DimnameList` would come first.
    assert [g.signature.signature_str() for g in group_overloads(grouped)] == [
        "logsumexp(Tensor input, IntArrayRef[1] dim, bool keepdim=False)",
        "logsumexp(Tensor input, DimnameList[1] dim, bool keepdim=False)",
    ]


def test_annotated_fn_args_drop_the_list_size_from_the_type(tmp_path: Path) -> None:
    f = spec_for(tmp_path, LOGSUMEXP).functions[1]
    assert required_arguments(f.func.arguments.flat_positional, kwarg_only=False) == [
        {"is_kwarg_only": "False", "name": "self", "simple_type": "Tensor"},
        {"is_kwarg_only": "False", "name": "dim", "simple_type": "DimnameList", "size": 1},
    ]
    assert python.argument_type_str(named("Dimname[]?"), simple_type=True) == "DimnameList?"


# -- lazy tensors -------------------------------------------------------------------------


def test_a_lazy_backend_cannot_generate_a_dimname_operator(tmp_path: Path) -> None:
    native = tmp_path / "aten" / "native"
    native.mkdir(parents=True)
    write_spec(native, "- func: softmax.Dimname(Tensor self, Dimname dim) -> Tensor\n")
    (native / "tags.yaml").write_text(TAGS.read_text())
    yaml = tmp_path / "backend.yaml"
    yaml.write_text(
        "backend: Lazy\ncpp_namespace: torch::lazy\nfull_codegen:\n  - softmax.Dimname\n"
    )
    argv = ["lazy", "-s", str(yaml), "-o", str(tmp_path / "out"), "--dry-run", "1"]
    argv += ["--source-path", str(tmp_path / "aten"), "--torch-version", "2.13"]
    options = lazy_options(build_parser().parse_args(argv))
    backend = dataclasses.replace(options.backend, release=RELEASE_2_12)
    options = dataclasses.replace(options, backend=backend)
    with pytest.raises(SpecError) as raised:
        read_lazy(options)
    err = io.StringIO()
    write_diagnostics(raised.value.diagnostics, err)
    assert err.getvalue().replace(str(tmp_path), "$DIR").splitlines()[:3] == [
        "$DIR/backend.yaml:4:5: error: 'softmax.Dimname': argument 'dim' has type 'Dimname', "
        "which the lazy IR cannot hold",
        "    - softmax.Dimname",
        "      ^~~~~~~~~~~~~~~",
    ]


# -- structured kernels -------------------------------------------------------------------

SGN = """\
- func: sgn(Tensor self) -> Tensor
  structured_delegate: sgn.out
- func: sgn.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  structured_inherits: TensorIteratorBase
  dispatch:
    CPU: sgn_out
"""


def set_output_raw_strided(tmp_path: Path, release: Release) -> str:
    """The functional class's `set_output_raw_strided` in RegisterCPU.cpp (as its file has
    it: without blank lines)."""
    spec = spec_for(tmp_path, SGN, release)
    (g,) = spec.groups
    wrappers = StructuredWrappers(SignatureSet(), release=release)
    plan = KernelTable.of(spec, (DispatchKey.CPU,)).plan(DispatchKey.CPU)
    item = plan.of(g)
    assert item is not None
    (functional,) = (p for p in item.kernels if p.f is g.functional)
    text = wrappers.definition(plan.index, functional, item.primary)
    lines = [line for line in text.splitlines() if line.strip()]
    start = lines.index("    void set_output_raw_strided(")
    return "\n".join(lines[start : lines.index("    }", start) + 1])


def test_structured_outputs_get_their_names_before_2_13(tmp_path: Path) -> None:
    assert set_output_raw_strided(tmp_path, RELEASE_2_12) == (
        "    void set_output_raw_strided(\n"
        "        int64_t output_idx, IntArrayRef sizes, IntArrayRef strides,\n"
        "        TensorOptions options, DimnameList names\n"
        "    ) override {\n"
        "        outputs_[output_idx] = create_out(sizes, strides, options);\n"
        "        if (!names.empty()) {\n"
        "          namedinference::propagate_names(outputs_[output_idx], names);\n"
        "        }\n"
        "        // super must happen after, so that downstream can use maybe_get_output\n"
        "        // to retrieve the output\n"
        "        at::native::structured_sgn_out::set_output_raw_strided(output_idx, sizes, "
        "strides, options, names);\n"
        "    }"
    )
    assert set_output_raw_strided(tmp_path, RELEASE_2_13) == (
        "    void set_output_raw_strided(\n"
        "        int64_t output_idx, IntArrayRef sizes, IntArrayRef strides,\n"
        "        TensorOptions options\n"
        "    ) override {\n"
        "        outputs_[output_idx] = create_out(sizes, strides, options);\n"
        "        // super must happen after, so that downstream can use maybe_get_output\n"
        "        // to retrieve the output\n"
        "        at::native::structured_sgn_out::set_output_raw_strided(output_idx, sizes, "
        "strides, options);\n"
        "    }"
    )
