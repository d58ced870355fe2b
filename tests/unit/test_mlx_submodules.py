"""Submodules of bound MLX functions: `name: linalg.norm` in, `m_linalg.def(...)` out.

A bound entry of the MLX dialect whose name is dotted is a function of the
submodule of that name (`spec/mlx/bound_entry.py`); its C++ functions are looked
up in the namespace of that name inside the library's. `targets/mlx/bindings.py`
makes each submodule once (`m.def_submodule`) after the module's own functions,
`targets/mlx/stubs.py` writes a stub per submodule that the module's stub imports.
examples/mlx_core builds mlx.core's linalg, fft, random and fast this way.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from opgen.diagnostics import SpecError
from opgen.spec.mlx.model import MlxLibrary
from opgen.spec.mlx.reader import load_mlx_library
from opgen.targets.mlx import bindings
from opgen.targets.mlx.generate import library_files
from opgen.targets.mlx.stubs import stub, submodule_stub

SPEC = """\
- name: abs
  python_signature: "abs(a: array, /, *, stream: StreamOrDevice = None) -> array"
- name: linalg.inv
  python_signature: "inv(a: array, *, stream: StreamOrDevice = None) -> array"
  doc: The inverse.
- name: fft.fftn
  python_signature: "fftn(a: array, s: Shape | None = None, stream: StreamOrDevice = None) -> array"
  code: "s ? fft::fftn(a, *s, stream) : fft::fftn(a, stream)"
- name: linalg.det
  python_signature: "det(a: array, *, stream: StreamOrDevice = None) -> array"
"""


def read(tmp_path: Path, entries: str) -> MlxLibrary:
    """The library of `entries` (YAML, dedented), module `ops` of namespace mlx::core."""
    path = tmp_path / "spec.yaml"
    path.write_text("- namespace: mlx::core\n  module: ops\n" + textwrap.dedent(entries))
    return load_mlx_library(str(path), derivatives=None)


def errors(tmp_path: Path, entries: str) -> list[str]:
    with pytest.raises(SpecError) as caught:
        read(tmp_path, entries)
    located = [(d.location, d.message) for d in caught.value.diagnostics]
    return [f"{at.line}:{at.col}: {message}" for at, message in located if at is not None]


def test_a_dotted_name_is_a_function_of_a_submodule(tmp_path: Path) -> None:
    library = read(tmp_path, SPEC)
    assert [(f.submodule, f.python_name, f.qualified_name) for f in library.functions] == [
        ("", "abs", "abs"),
        ("linalg", "inv", "linalg.inv"),
        ("fft", "fftn", "fft.fftn"),
        ("linalg", "det", "linalg.det"),
    ]


def test_a_name_may_be_in_the_module_and_in_a_submodule(tmp_path: Path) -> None:
    library = read(
        tmp_path,
        """\
        - name: split
          python_signature: "split(a: array, indices_or_sections: int, axis: int = 0) -> list[array]"
        - name: random.split
          python_signature: "split(key: array, num: int = 2) -> array"
        """,  # noqa: E501
    )
    assert [f.qualified_name for f in library.functions] == ["split", "random.split"]


def test_bindings_make_each_submodule_once_after_the_modules_functions(tmp_path: Path) -> None:
    library = read(tmp_path, SPEC)
    text = bindings.bindings([], library.namespace, library.module, None, "@gen", library.functions)
    assert text[text.index("NB_MODULE") :] == textwrap.dedent(
        """\
        NB_MODULE(ops, m) {
          nb::module_::import_("mlx.core");
          m.doc() = "MLX operators of mlx::core, bound by opgen.";

          m.def(
              "abs",
              [](const mlx::core::array& a, mlx::core::StreamOrDevice s) {
                return mlx::core::abs(a, s);
              },
              nb::arg(),
              nb::kw_only(),
              nb::arg("stream") = nb::none(),
              nb::sig("def abs(a: array, /, *, stream: StreamOrDevice = None) -> array")
          );

          nb::module_ m_linalg = m.def_submodule("linalg", "Functions of mlx::core::linalg, bound by opgen.");

          m_linalg.def(
              "inv",
              [](const mlx::core::array& a, mlx::core::StreamOrDevice s) {
                return mlx::core::linalg::inv(a, s);
              },
              nb::arg("a"),
              nb::kw_only(),
              nb::arg("stream") = nb::none(),
              nb::sig("def inv(a: array, *, stream: StreamOrDevice = None) -> array"),
              "The inverse."
          );

          m_linalg.def(
              "det",
              [](const mlx::core::array& a, mlx::core::StreamOrDevice s) {
                return mlx::core::linalg::det(a, s);
              },
              nb::arg("a"),
              nb::kw_only(),
              nb::arg("stream") = nb::none(),
              nb::sig("def det(a: array, *, stream: StreamOrDevice = None) -> array")
          );

          nb::module_ m_fft = m.def_submodule("fft", "Functions of mlx::core::fft, bound by opgen.");

          m_fft.def(
              "fftn",
              [](const mlx::core::array& a, const std::optional<std::vector<std::int64_t>>& s_py, mlx::core::StreamOrDevice stream) {
                const std::optional<mlx::core::Shape> s = opgen_mlx::to_shape(s_py);
                using namespace mlx::core;
                using namespace mlx::core::fft;
                return s ? fft::fftn(a, *s, stream) : fft::fftn(a, stream);
              },
              nb::arg("a"),
              nb::arg("s").none() = nb::none(),
              nb::arg("stream") = nb::none(),
              nb::sig("def fftn(a: array, s: Sequence[int] | None = None, stream: StreamOrDevice = None) -> array")
          );
        }
        """  # noqa: E501
    )


def test_the_modules_stub_imports_each_submodules_stub(tmp_path: Path) -> None:
    library = read(tmp_path, SPEC)
    assert stub([], library.namespace, "@gen", library.functions, "ops") == textwrap.dedent(
        '''\
        # @gen
        """MLX operators of mlx::core, bound by opgen."""

        from mlx.core import StreamOrDevice, array

        from ops import fft as fft
        from ops import linalg as linalg

        def abs(a: array, /, *, stream: StreamOrDevice = None) -> array: ...
        '''
    )
    assert submodule_stub("linalg", library.namespace, "@gen", library.functions) == (
        textwrap.dedent(
            '''\
            # @gen
            """Functions of mlx::core::linalg, bound by opgen."""

            from mlx.core import StreamOrDevice, array

            def inv(a: array, *, stream: StreamOrDevice = None) -> array:
                """The inverse."""

            def det(a: array, *, stream: StreamOrDevice = None) -> array: ...
            '''
        )
    )


def test_each_submodule_has_a_stub_in_the_modules_directory(tmp_path: Path) -> None:
    library = read(tmp_path, SPEC)
    files = library_files(library, tmp_path / "out", str(tmp_path / "spec.yaml"))
    assert sorted(files.paths()) == [
        "ops.cmake",
        "ops.pyi",
        "ops/fft.pyi",
        "ops/linalg.pyi",
        "ops_bindings.cpp",
    ]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("1x.norm", "'1x' is not a Python name in '1x.norm'"),
        ("class.norm", "'class' is a Python keyword in 'class.norm'"),
        (".norm", "'' is not a Python name in '.norm'"),
        ("linalg.", "'' is not a C++ name in 'linalg.'"),
        ("linalg.norm.x", "'norm.x' is not a C++ name in 'linalg.norm.x'"),
    ],
)
def test_a_submodule_and_a_name_are_names(tmp_path: Path, name: str, message: str) -> None:
    entry = f'- name: {name}\n  python_signature: "norm(a: array) -> array"\n'
    assert errors(tmp_path, entry) == [
        f"3:9: {message}: a function of a submodule is named 'submodule.name' ('linalg.norm')"
    ]


def test_a_function_twice_in_one_submodule(tmp_path: Path) -> None:
    entries = '- name: linalg.norm\n  python_signature: "norm(a: array) -> array"\n' * 2
    assert errors(tmp_path, entries) == [
        "5:3: a second function 'linalg.norm' (the first is on line 3); write several "
        "signatures of one name as 'overloads:'"
    ]


def test_a_function_is_not_named_as_a_submodule(tmp_path: Path) -> None:
    entries = """\
    - name: linalg
      python_signature: "linalg(a: array) -> array"
    - name: linalg.norm
      python_signature: "norm(a: array) -> array"
    """
    assert errors(tmp_path, entries) == [
        "3:3: 'linalg' is a function and a submodule (line 5): a module has one of a name"
    ]


def test_only_a_bound_function_is_in_a_submodule(tmp_path: Path) -> None:
    entries = '- name: linalg.norm\n  signature: "array norm(const array& a)"\n'
    assert errors(tmp_path, entries) == [
        "3:9: 'linalg.norm' is in a submodule, which only a bound function (one with "
        "'call:', 'code:', 'overloads:' or only a 'python_signature:') can be: an operator "
        "is defined in the library's namespace"
    ]
