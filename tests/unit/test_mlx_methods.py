"""Methods of `array` from the MLX dialect: `variants:` and `name: array.<method>` in,
`array_methods()` out.

A function entry with `variants: [function, method]` is a method of `array` too, its
first parameter the array; an entry named `array.<name>` is a method (or, with
`property: true`, a property) of a signature of its own, `self` first, and derives
the reflected and in-place operators it names (`spec/mlx/methods.py`).
`targets/mlx/bindings.py` returns them from the module's `array_methods()`.
examples/mlx_core binds MLX's array methods this way.
"""

from __future__ import annotations

import io
import json
import textwrap
from pathlib import Path

import pytest
from tests.unit.test_mlx_submodules import errors, read

from opgen.cli import main
from opgen.diagnostics import SpecError
from opgen.spec.mlx.model import BoundAs, ParameterKind, bound_counts
from opgen.spec.mlx.reader import load_mlx_library
from opgen.targets.mlx import bindings
from opgen.targets.mlx.library import bind
from opgen.targets.mlx.stubs import stub

SPEC = """\
- name: sum
  python_signature: "sum(a: array, /, axis: int | None = None, *, stream: StreamOrDevice = None) -> array"
  variants: [function, method]
  call: sum(a, axis?)
  doc: The sum.
- name: array.shape
  python_signature: "shape(self) -> tuple[int, ...]"
  property: true
  code: nb::tuple(nb::cast(std::vector<int>(self.shape().begin(), self.shape().end())))
  doc: The shape.
- name: array.__sub__
  python_signature: "__sub__(self, other: scalar | array) -> array"
  call: subtract(self, other)
  promote: [self, other]
  operation: subtraction
  reflected: __rsub__
  inplace: __isub__
- name: array.__eq__
  python_signature: "__eq__(self, other: scalar | array) -> array | bool"
  call: equal(self, other)
  promote: [self, other]
  incomparable: false
"""  # noqa: E501


def test_each_entry_gives_its_function_and_methods(tmp_path: Path) -> None:
    library = read(tmp_path, SPEC)
    assert [
        (f.qualified_name, f.bound_as.value, f.inplace, f.operation, f.incomparable)
        for f in library.functions
    ] == [
        ("sum", "function", False, "", None),
        ("array.sum", "method", False, "", None),
        ("array.shape", "property", False, "", None),
        ("array.__sub__", "method", False, "subtraction", None),
        ("array.__isub__", "method", True, "inplace subtraction", None),
        ("array.__rsub__", "method", False, "subtraction", None),
        ("array.__eq__", "method", False, "", False),
    ]


def test_a_method_variant_takes_the_array_first(tmp_path: Path) -> None:
    library = read(tmp_path, SPEC)
    method = library.functions[1]
    assert method.bound_as is BoundAs.METHOD
    first = method.overloads[0].parameters[0]
    assert (first.name, first.type.text, first.kind) == ("a", "array", ParameterKind.POSITIONAL)


def test_array_methods_returns_them_made_anew(tmp_path: Path) -> None:
    library = read(tmp_path, SPEC)
    text = bindings.bindings([], library.namespace, library.module, None, "@gen", library.functions)
    start = text.index('  m.def(\n      "array_methods"')
    assert text[start:] == textwrap.dedent(
        """\
          m.def(
              "array_methods",
              []() {
                nb::object holder = nb::module_::import_("builtins").attr("type")(
                    "array", nb::make_tuple(), nb::dict());
                nb::dict methods;
                methods["sum"] = nb::cpp_function(
                    [](const mlx::core::array& a, std::optional<int> axis, mlx::core::StreamOrDevice s) {
                      if (!axis) {
                        return mlx::core::sum(a, s);
                      }
                      return mlx::core::sum(a, *axis, s);
                    },
                    nb::is_method(),
                    nb::scope(holder),
                    nb::name("sum"),
                    nb::arg("axis").none() = nb::none(),
                    nb::kw_only(),
                    nb::arg("stream") = nb::none(),
                    nb::sig("def sum(self, axis: int | None = None, *, stream: StreamOrDevice = None) -> array"),
                    "The sum."
                );
                methods["shape"] = nb::module_::import_("builtins").attr("property")(
                    nb::cpp_function(
                        [](const mlx::core::array& self) {
                          using namespace mlx::core;
                          return nb::tuple(nb::cast(std::vector<int>(self.shape().begin(), self.shape().end())));
                        },
                        nb::sig("def shape(self) -> tuple[int, ...]")
                    ),
                    nb::none(),
                    nb::none(),
                    "The shape.");
                methods["__sub__"] = nb::cpp_function(
                    [](const mlx::core::array& self, const opgen_mlx::ScalarOrArray& other_py) {
                      opgen_mlx::check_operand(other_py, "subtraction");
                      const std::optional<mlx::core::Dtype> promoted_dtype = opgen_mlx::promoted_dtype(self, other_py);
                      const opgen_mlx::ArrayArgument other_array(other_py, promoted_dtype);
                      const mlx::core::array& other = other_array;
                      return mlx::core::subtract(self, other);
                    },
                    nb::is_method(),
                    nb::scope(holder),
                    nb::name("__sub__"),
                    nb::arg("other"),
                    nb::sig("def __sub__(self, other: scalar | array) -> array")
                );
                methods["__isub__"] = nb::cpp_function(
                    [](mlx::core::array& self, const opgen_mlx::ScalarOrArray& other_py) -> mlx::core::array& {
                      opgen_mlx::check_operand(other_py, "inplace subtraction");
                      self.overwrite_descriptor([&]() -> mlx::core::array {
                          const std::optional<mlx::core::Dtype> promoted_dtype = opgen_mlx::promoted_dtype(self, other_py);
                          const opgen_mlx::ArrayArgument other_array(other_py, promoted_dtype);
                          const mlx::core::array& other = other_array;
                          return mlx::core::subtract(self, other);
                      }());
                      return self;
                    },
                    nb::is_method(),
                    nb::scope(holder),
                    nb::name("__isub__"),
                    nb::arg("other"),
                    nb::rv_policy::none,
                    nb::sig("def __isub__(self, other: scalar | array) -> array")
                );
                methods["__rsub__"] = nb::cpp_function(
                    [](const mlx::core::array& self, const opgen_mlx::ScalarOrArray& other_py) {
                      opgen_mlx::check_operand(other_py, "subtraction");
                      const std::optional<mlx::core::Dtype> promoted_dtype = opgen_mlx::promoted_dtype(self, other_py);
                      const opgen_mlx::ArrayArgument other_array(other_py, promoted_dtype);
                      const mlx::core::array& other = other_array;
                      return mlx::core::subtract(other, self);
                    },
                    nb::is_method(),
                    nb::scope(holder),
                    nb::name("__rsub__"),
                    nb::arg("other"),
                    nb::sig("def __rsub__(self, other: scalar | array) -> array")
                );
                methods["__eq__"] = nb::cpp_function(
                    [](const mlx::core::array& self, const opgen_mlx::ScalarOrArray& other_py) -> std::variant<mlx::core::array, bool> {
                      if (!opgen_mlx::is_operand(other_py)) {
                        return false;
                      }
                      const std::optional<mlx::core::Dtype> promoted_dtype = opgen_mlx::promoted_dtype(self, other_py);
                      const opgen_mlx::ArrayArgument other_array(other_py, promoted_dtype);
                      const mlx::core::array& other = other_array;
                      return mlx::core::equal(self, other);
                    },
                    nb::is_method(),
                    nb::scope(holder),
                    nb::name("__eq__"),
                    nb::arg("other"),
                    nb::sig("def __eq__(self, other: scalar | array) -> array | bool")
                );
                return methods;
              },
              nb::sig("def array_methods() -> dict[str, object]"),
              "The methods, operators and properties this module binds on `mlx.core.array`, by attribute name, to be set on the class: `for name, value in array_methods().items(): setattr(mlx.core.array, name, value)`.");
        }
        """  # noqa: E501
    )


def test_the_stub_has_the_functions_and_array_methods(tmp_path: Path) -> None:
    library = read(tmp_path, SPEC)
    text = stub([], library.namespace, "@gen", library.functions, library.module)
    assert text[text.index("def ") :] == textwrap.dedent(
        '''\
        def sum(a: array, /, axis: int | None = None, *, stream: StreamOrDevice = None) -> array:
            """The sum."""

        def array_methods() -> dict[str, object]:
            """The methods, operators and properties this module binds on `mlx.core.array`, by attribute name, to be set on the class: `for name, value in array_methods().items(): setattr(mlx.core.array, name, value)`."""
        '''  # noqa: E501
    )


METHOD = '  python_signature: "f(self, other: array) -> array"\n'


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            '- name: f\n  python_signature: "f(a: array) -> array"\n  variants: [method, mehtod]\n',
            "5:13: 'variants:' lists 'function', 'method' or both ('mehtod'; did you mean "
            "'method'?)",
        ),
        (
            '- name: linalg.f\n  python_signature: "f(a: array) -> array"\n  variants: method\n',
            "5:13: a function of the submodule 'linalg' is no method",
        ),
        (
            '- name: f\n  python_signature: "f(shape: Shape) -> array"\n  variants: method\n',
            "4:22: a method takes the array first: the first parameter is 'array' or "
            "'scalar | array'",
        ),
        (
            '- name: f\n  python_signature: "f(a: array) -> array"\n  inplace: __if__\n',
            "5:3: 'inplace:' is for a method of its own, an entry named 'array.f'",
        ),
        (
            "- name: array.f\n  operation: addition\n  overloads:\n"
            '    - python_signature: "f(self) -> array"\n'
            '    - python_signature: "f(self, b: int) -> array"\n',
            "4:3: 'operation:' is for a method of one signature",
        ),
        (
            '- name: array.f\n  python_signature: "f(a: array) -> array"\n',
            "4:22: a method of 'array' takes the array first, as 'self': 'f(self, ...)'",
        ),
        (
            '- name: array.f\n  python_signature: "f(self) -> array"\n  variants: method\n',
            "5:3: an entry named 'array.<name>' is a method; 'variants:' is for a function entry",
        ),
        (
            f"- name: array.f\n{METHOD}  property: true\n",
            "4:30: a property takes 'self' alone: 'f(self) -> ...'",
        ),
        (
            f"- name: array.f\n{METHOD}  property: 1\n",
            "5:13: 'property:' is true or false",
        ),
        (
            f"- name: array.f\n{METHOD}  code: add(self, other)\n  reflected: __rf__\n",
            "6:14: 'reflected:' swaps 'self' and the one other operand in 'call:'; write "
            "the reflected method as an entry of its own",
        ),
        (
            f"- name: array.f\n{METHOD}  reflected: __radd\n",
            "5:14: 'reflected:' names the method it derives, '__radd__' and the like",
        ),
        (
            f"- name: array.f\n{METHOD}  inplace: __add__\n",
            "5:12: 'inplace:' names the method it derives, '__iadd__' and the like",
        ),
        (
            f"- name: array.f\n{METHOD}  incomparable: false\n",
            "5:3: 'incomparable:' returns a bool where the array would be: the signature "
            "returns 'array | bool'",
        ),
    ],
)
def test_method_mistakes_are_located(tmp_path: Path, entry: str, message: str) -> None:
    assert errors(tmp_path, entry) == [message]


def test_a_method_twice(tmp_path: Path) -> None:
    entries = """\
    - name: sum
      python_signature: "sum(a: array) -> array"
      variants: [function, method]
    - name: array.sum
      python_signature: "sum(self) -> array"
    """
    assert errors(tmp_path, entries) == [
        "6:3: a second function 'array.sum' (the first is on line 3); write several "
        "signatures of one name as 'overloads:'"
    ]


def test_the_spec_language_says_variants_as_pytorch_does(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(
        textwrap.dedent(
            """\
            - namespace: mlx::core
              module: ops
            - func: mlx::core::sum(Tensor a, bool keepdims=False) -> Tensor
              call: sum(a, keepdims)
              variants: function, method
            - func: mlx::core::sum.axis(Tensor a, int axis, bool keepdims=False) -> Tensor
              call: sum(a, axis, keepdims)
            """
        )
    )
    library = load_mlx_library(str(path), derivatives=None)
    assert [(f.qualified_name, len(f.overloads)) for f in library.functions] == [
        ("sum", 2),
        ("array.sum", 2),
    ]
    text = bindings.bindings([], library.namespace, library.module, None, "@gen", library.functions)
    assert text.count('methods["sum"] = nb::cpp_function(') == 2  # chained in the holder


TOOLS_SPEC = """\
- namespace: mlx::core
  module: ops
- name: split
  python_signature: "split(a: array, indices_or_sections: int, axis: int = 0) -> list[array]"
  variants: [function, method]
- name: random.split
  python_signature: "split(key: array, num: int = 2) -> array"
- name: array.shape
  python_signature: "shape(self) -> tuple[int, ...]"
  property: true
  code: nb::tuple(nb::cast(std::vector<int>(self.shape().begin(), self.shape().end())))
"""


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out, err)
    return status, out.getvalue(), err.getvalue()


def test_the_tools_tell_functions_submodules_and_methods_apart(tmp_path: Path) -> None:
    old, new = tmp_path / "old.yaml", tmp_path / "new.yaml"
    old.write_text(TOOLS_SPEC)
    new.write_text(TOOLS_SPEC.replace("axis: int = 0", "axis: int = 1"))
    assert run("check", "--mlx", str(old)) == (
        0,
        f"{old}: ok: 0 operators, 2 bound functions, 2 methods of array\n",
        "",
    )
    _, out, _ = run("dump", "--mlx", str(old))
    records = [json.loads(line) for line in out.splitlines()]
    assert [(r["name"], r["kind"]) for r in records] == [
        ("split", "bound"),
        ("array.split", "method"),
        ("random.split", "bound"),
        ("array.shape", "property"),
    ]
    _, out, _ = run("diff", "--mlx", str(old), str(new), "--format", "json")
    changed = [json.loads(line)["name"] for line in out.splitlines()]
    assert changed == ["mlx::core::split", "mlx::core::array.split"]


def test_an_operator_is_a_method_too_with_variants(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(
        "- func: mylib::scale(Tensor x, float factor=2.0) -> Tensor\n"
        "  variants: [function, method]\n"
        "  doc: x * factor.\n"
    )
    library = load_mlx_library(str(path), derivatives=None)
    assert [(f.qualified_name, f.operator is not None) for f in library.functions] == [
        ("scale", True),
        ("array.scale", True),
    ]
    text = bindings.operator_method(bind(library)[0], library.namespace)
    assert text == [
        'methods["scale"] = nb::cpp_function(',
        "    &mylib::scale,",
        "    nb::is_method(),",
        "    nb::scope(holder),",
        '    nb::name("scale"),',
        '    nb::arg("factor") = 2.0,',
        "    nb::kw_only(),",
        '    nb::arg("stream") = nb::none(),',
        '    "x * factor.");',
    ]
    assert run("check", "--mlx", str(path), "--no-derivatives") == (
        0,
        f"{path}: ok: 1 operator, 1 method of array\n",
        "",
    )


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            "- func: mylib::scale(Tensor x) -> Tensor\n  variants: method\n",
            "2:13: an operator is a function of the module: 'variants: [function, method]' "
            "makes it a method too",
        ),
        (
            "- func: mylib::scale(float f, Tensor x) -> Tensor\n  variants: function, method\n",
            "2:13: a method takes the array first: the first argument is 'Tensor'",
        ),
    ],
)
def test_an_operators_variants_are_checked(tmp_path: Path, entry: str, message: str) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(entry)
    with pytest.raises(SpecError) as caught:
        load_mlx_library(str(path), derivatives=None)
    located = [(d.location, d.message) for d in caught.value.diagnostics]
    assert [f"{at.line}:{at.col}: {m}" for at, m in located if at is not None] == [message]


def test_a_method_of_its_own_may_have_several_signatures(tmp_path: Path) -> None:
    library = read(
        tmp_path,
        """\
        - name: array.swapaxes
          overloads:
            - python_signature: "swapaxes(self) -> array"
              code: swapaxes(self, 0, 1)
            - python_signature: "swapaxes(self, axis1: int, axis2: int) -> array"
        """,
    )
    [method] = library.functions
    assert (method.qualified_name, method.bound_as, len(method.overloads)) == (
        "array.swapaxes",
        BoundAs.METHOD,
        2,
    )


INDEXING = """\
- name: array.__getitem__
  python_signature: "__getitem__(self, arg: Index) -> array"
  code: arg.get(self)
- name: array.at
  python_signature: "at(self) -> ArrayAt"
  property: true
  doc: Updates at an index.
- name: array.at.add
  python_signature: "add(self, value: scalar | array) -> array"
  code: index.add(self, value)
  promote: [self, value]
"""


def test_indexing_and_at_are_declared_with_index_and_arrayat(tmp_path: Path) -> None:
    library = read(tmp_path, INDEXING)
    assert [(f.qualified_name, f.bound_as.value) for f in library.functions] == [
        ("array.__getitem__", "method"),
        ("array.at", "property"),
        ("array.at.add", "update"),
    ]
    assert bound_counts(library) == ", 2 methods of array, 1 of array.at"
    text = bindings.bindings([], library.namespace, library.module, None, "@gen", library.functions)
    assert bindings.bound.indexing() in text  # the support of `Index`, once
    start = text.index("  nb::class_<opgen_mlx::ArrayAt>")
    assert text[start : text.index('  m.def(\n      "array_methods"')] == _indented(
        """\
          nb::class_<opgen_mlx::ArrayAt>(m, "ArrayAt")
              .def(
                  "__getitem__",
                  [](nb::handle at, nb::object indices) {
                    nb::inst_ptr<opgen_mlx::ArrayAt>(at)->given = opgen_mlx::Index{indices};
                    return nb::borrow(at);
                  },
                  nb::arg("indices").none(),
                  nb::sig("def __getitem__(self, indices: object | None) -> ArrayAt"))
              .def(
                  "add",
                  [](const opgen_mlx::ArrayAt& self_py, const opgen_mlx::ScalarOrArray& value_py) {
                    const mlx::core::array& self = self_py.array;
                    const opgen_mlx::Index& index = self_py.index();
                    const std::optional<mlx::core::Dtype> promoted_dtype = opgen_mlx::promoted_dtype(self, value_py);
                    const opgen_mlx::ArrayArgument value_array(value_py, promoted_dtype);
                    const mlx::core::array& value = value_array;
                    using namespace mlx::core;
                    return index.add(self, value);
                  },
                  nb::arg("value"),
                  nb::sig("def add(self, value: scalar | array) -> array")
              );

        """,  # noqa: E501
        "  ",
    )
    start = text.index('        methods["__getitem__"]')
    assert text[start : text.index("        return methods;")] == _indented(
        """\
        methods["__getitem__"] = nb::cpp_function(
            [](const mlx::core::array& self, const opgen_mlx::Index& arg) {
              using namespace mlx::core;
              return arg.get(self);
            },
            nb::is_method(),
            nb::scope(holder),
            nb::name("__getitem__"),
            nb::arg("arg").none(),
            nb::sig("def __getitem__(self, arg: object | None) -> array")
        );
        methods["at"] = nb::module_::import_("builtins").attr("property")(
            nb::cpp_function(
                [](const mlx::core::array& self) {
                  return opgen_mlx::ArrayAt{self, {}};
                },
                nb::sig("def at(self) -> ArrayAt")
            ),
            nb::none(),
            nb::none(),
            "Updates at an index.");
        """
    )
    assert (
        "class ArrayAt:\n"
        "    def __getitem__(self, indices: object | None) -> ArrayAt: ...\n"
        "    def add(self, value: scalar | array) -> array: ...\n"
    ) in stub([], library.namespace, "@gen", library.functions)


def _indented(text: str, by: str = "        ") -> str:
    return textwrap.indent(textwrap.dedent(text), by)


AT = '- name: array.at\n  python_signature: "at(self) -> ArrayAt"\n  property: true\n'
ADD = '  python_signature: "add(self, value: array) -> array"\n'


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            '- name: array.f\n  python_signature: "f(self, i: Index | None) -> array"\n',
            "4:33: an 'Index' takes None itself (a new axis): write 'Index'",
        ),
        (
            f"- name: array.at.add\n{ADD}  code: index.add(self, value)\n",
            "3:3: 'array.at.add' is a method of 'a.at[index]', and no entry 'array.at' makes "
            "the property: 'at(self) -> ArrayAt', 'property: true'",
        ),
        (
            f"{AT}- name: array.at.add\n{ADD}  call: add(self, value)\n",
            "7:22: an update method of 'a.at[index]' says what it runs in 'code:', with the "
            "array as 'self' and the index as 'index'",
        ),
        (
            f"{AT}- name: array.at.add\n"
            '  python_signature: "add(self, index: array) -> array"\n'
            "  code: index.add(self, index)\n",
            "7:32: 'index' is the index of 'a.at[index]' in the code: rename the parameter",
        ),
        (
            '- name: array.at\n  python_signature: "at(self) -> ArrayAt"\n',
            "3:3: 'at' is a property: write 'property: true'",
        ),
        (
            f"{AT}  code: self\n",
            "4:22: the property 'at' is the 'ArrayAt' opgen makes: it has no 'call:' or 'code:'",
        ),
        (
            '- name: array.f\n  python_signature: "f(self) -> ArrayAt"\n  property: true\n',
            "4:22: the property 'at' returns 'ArrayAt', and only it",
        ),
        (
            '- name: linalg.f\n  python_signature: "f(a: array) -> ArrayAt"\n',
            "4:22: 'ArrayAt' is what the property 'array.at' returns, and no function",
        ),
    ],
)
def test_indexing_mistakes_are_located(tmp_path: Path, entry: str, message: str) -> None:
    assert errors(tmp_path, entry) == [message]
