"""`opgen pyi`: stubs of small specs, the stub forms, the docstring reader and the command."""

from __future__ import annotations

import io
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from opgen.api import pyi
from opgen.api.signatures import SignatureSet
from opgen.cli import main
from opgen.diagnostics import SpecError
from opgen.python_bindings.overloads import load_deprecated
from opgen.releases import Release
from opgen.spec import Spec
from opgen.targets.pyi.docs import load_docstrings
from opgen.targets.pyi.hints import spec_stubs
from opgen.targets.pyi.stubs import Attribute, Definition, Import, Stub, overload_set

HINTS = pyi.hints_for(Release(2, 13))  # the hints of torch 2.13's stubs

SPEC = """
- func: scale(Tensor self, Scalar factor=1) -> Tensor
  variants: function, method
- func: scale.out(Tensor self, Scalar factor=1, *, Tensor(a!) out) -> Tensor(a!)
- func: peak(Tensor self, int dim) -> (Tensor values, Tensor indices)
  variants: function, method
- func: grow(Tensor self, SymInt[] size) -> Tensor
  variants: method
- func: loss(Tensor self, Tensor target, int reduction=Mean) -> Tensor
- func: cdist(Tensor x1, Tensor x2) -> Tensor
"""
SpecFromText = Callable[[str], Spec]
TAGS = "- tag: core\n  desc: a core operator\n"


def texts(stubs: dict[str, list[Stub]]) -> dict[str, list[str]]:
    return {name: [s.text for s in found] for name, found in stubs.items()}


@pytest.fixture
def spec(spec_of: SpecFromText) -> Spec:
    return spec_of(SPEC)


def test_functions_merge_out_variants_and_spell_defaults_as_python(spec: Spec) -> None:
    stubs = spec_stubs(spec.functions, (), SignatureSet(), HINTS)
    assert texts(stubs.functions) == {
        "cdist": [],  # torch defines cdist in Python: only its hand-written stub counts
        # Split as the C++ spelling (`at::Reduction::Mean`) made it, as upstream does.
        "loss": [
            "def loss(\n    input: Tensor,\n    target: Tensor,\n    reduction: _int = 1,\n"
            ") -> Tensor: ..."
        ],
        "peak": ["def peak(input: Tensor, dim: _int) -> torch.return_types.peak: ..."],
        "scale": [
            "def scale(\n"
            "    input: Tensor,\n"
            "    factor: Number | _complex = 1,\n"
            "    *,\n"
            "    out: Tensor | None = None,\n"
            ") -> Tensor: ..."
        ],
    }


def test_methods_have_vararg_forms_and_keep_binding_spellings(spec: Spec) -> None:
    stubs = spec_stubs(spec.functions, (), SignatureSet(), HINTS)
    assert texts(stubs.methods) == {
        "grow": [
            "def grow(self, size: Sequence[_int | SymInt]) -> Tensor: ...",
            "def grow(self, *size: _int | SymInt) -> Tensor: ...",
        ],
        "peak": ["def peak(self, dim: _int) -> torch.return_types.peak: ..."],
        "scale": ["def scale(self, factor: Number | _complex = 1) -> Tensor: ..."],
    }


def test_named_returns_define_one_structseq_class(spec: Spec) -> None:
    stubs = spec_stubs(spec.functions, (), SignatureSet(), HINTS)
    assert list(stubs.structseqs) == ["peak"]
    assert stubs.structseqs["peak"].startswith(
        "class peak(tuple[Tensor, Tensor]):  # fmt: skip\n"
        "    @property\n"
        "    def values(self) -> Tensor: ...\n"
    )


def test_two_structseqs_of_one_name_that_differ_are_an_error(spec_of: SpecFromText) -> None:
    spec = spec_of(
        """
        - func: peak(Tensor self) -> (Tensor values, Tensor indices)
        - func: peak.dim(Tensor self, int dim) -> (Tensor top, Tensor indices)
        """
    )
    with pytest.raises(SpecError) as error:
        spec_stubs(spec.functions, (), SignatureSet(), HINTS)
    assert "torch.return_types.peak" in error.value.message
    assert error.value.location is not None and error.value.location.line == 3


# -- stub forms ---------------------------------------------------------------------------


def test_definitions_render_like_derived_ones() -> None:
    short = Definition("dim", ("self",), "_int")
    assert short.stub().text == "def dim(self) -> _int: ..."
    long = Definition("numel", ("self", *(f"x{i}: Tensor" for i in range(6))), "_int")
    assert long.stub().text.splitlines()[0] == "def numel("
    assert Definition("f", ("x",), None, ("staticmethod",), "noqa: X").stub().text == (
        "@staticmethod\ndef f(x): ...  # noqa: X"
    )
    assert Attribute("is_cuda", "_bool").stub().text == "is_cuda: _bool"
    assert Attribute("all", "list[type]", "...").stub().text == "all: list[type] = ..."


def test_overloads_and_docstrings() -> None:
    stubs = [Definition("f", ("x: int",), "int").stub(), Definition("f", (), "int").stub()]
    assert overload_set(stubs, "Doc.\n\nMore.") == [
        '@overload\ndef f(x: int) -> int:\n    r"""\n    Doc.\n\n    More.\n    """',
        '@overload\ndef f() -> int:\n    r"""\n    Doc.\n\n    More.\n    """',
    ]
    flag = Attribute("is_cuda", "_bool").stub()
    assert overload_set([flag], "On the GPU.") == ['is_cuda: _bool\nr"""On the GPU."""\n']
    # A docstring a raw literal cannot hold is escaped, keeping its value.
    assert overload_set([flag], 'Say """hi"""') == ['is_cuda: _bool\n"""Say \\"""hi\\""""""\n']


def test_imports_split_when_long() -> None:
    assert Import("torch").render() == "import torch"
    assert Import("typing", ("Any",)).render() == "from typing import Any"
    names = tuple(f"name{i}" for i in range(12))
    assert Import("torch.types", names).render().splitlines()[:2] == [
        "from torch.types import (",
        "    name0,",
    ]


# -- docstrings ---------------------------------------------------------------------------

TORCH_DOCS = '''
"""Adds docstrings."""
import re
import torch._C
from torch._C import _add_docstr as add_docstr


def parse_kwargs(desc):
    """Not run: opgen knows what it does."""


def merge_dicts(*dicts):
    return {}


common_args = parse_kwargs(
    """
    input (Tensor): the input tensor.
    out (Tensor, optional): the output tensor.
        Keyword only.
"""
)
notes: dict[str, str] = merge_dicts(common_args, {"note": "A note."})

add_docstr(
    torch.abs,
    r"""
abs(input) -> Tensor

Args:
    {input}
"""
    .format(**common_args)
    + f"""
See {notes["note"]}
""",
)
add_docstr(torch.abs, "abs(input) -> Tensor\\n\\n    {out}".format(**common_args))
torch.abs.__module__ = "torch"
for name in ("exp", "sqrt"):
    full = f"_foreach_{name}"
    if hasattr(torch, full):
        add_docstr(getattr(torch, full), f"Apply {name}.")
'''
TENSOR_DOCS = '''
import torch._C
from torch._C import _add_docstr as add_docstr
from torch._torch_docs import parse_kwargs, notes



def add_docstr_all(method, docstr):
    add_docstr(getattr(torch._C.TensorBase, method), docstr)


add_docstr_all("abs", """
    abs() -> Tensor

    {note}
    """.format(**notes))
'''


def docs_dir(tmp_path: Path, torch_docs: str = TORCH_DOCS, tensor_docs: str = TENSOR_DOCS) -> str:
    (tmp_path / "_torch_docs.py").write_text(textwrap.dedent(torch_docs))
    (tmp_path / "_tensor_docs.py").write_text(textwrap.dedent(tensor_docs))
    return str(tmp_path)


def test_docstrings_are_read_without_running_the_modules(tmp_path: Path) -> None:
    assert load_docstrings(docs_dir(tmp_path)) == {
        # The later docstring replaces the earlier; {out} is the whole description.
        "torch.abs": "abs(input) -> Tensor\n\nout (Tensor, optional): the output tensor.\n"
        "    Keyword only.",
        "torch._foreach_exp": "Apply exp.",
        "torch._foreach_sqrt": "Apply sqrt.",
        "torch._C.TensorBase.abs": "abs() -> Tensor\n\nA note.",
    }


@pytest.mark.parametrize(
    ("statement", "line", "col", "what"),
    [
        ("add_docstr(torch.abs, open('x').read())", 2, 23, "this call"),
        ("x = 1 if True else 2", 2, 5, "this expression"),
        ("while False:\n    pass", 2, 1, "this statement"),
        ("add_docstr(torch.abs, unknown)", 2, 23, "the unknown name 'unknown'"),
    ],
)
def test_python_the_reader_cannot_evaluate_is_a_located_error(
    tmp_path: Path, statement: str, line: int, col: int, what: str
) -> None:
    directory = docs_dir(tmp_path, f"from torch._C import _add_docstr as add_docstr\n{statement}\n")
    with pytest.raises(SpecError) as error:
        load_docstrings(directory)
    location = error.value.location
    assert location is not None and (location.line, location.col) == (line, col)
    assert location.file.endswith("_torch_docs.py")
    assert error.value.message == f"cannot read docstrings from {what} without running it"


def test_unreadable_docs_are_located_errors(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="not a directory"):
        load_docstrings(str(tmp_path / "missing"))
    with pytest.raises(SpecError, match="no such file"):
        load_docstrings(str(tmp_path))
    with pytest.raises(SpecError, match="invalid Python") as error:
        load_docstrings(docs_dir(tmp_path, "x = (\n"))
    assert error.value.location is not None and error.value.location.line == 1


# -- the command --------------------------------------------------------------------------


def run(tmp_path: Path, *flags: str) -> tuple[int, str]:
    (tmp_path / "native_functions.yaml").write_text(textwrap.dedent(SPEC))
    (tmp_path / "tags.yaml").write_text(TAGS)
    err = io.StringIO()
    native, tags = str(tmp_path / "native_functions.yaml"), str(tmp_path / "tags.yaml")
    status = main(["pyi", native, tags, str(tmp_path / "out"), *flags], io.StringIO(), err)
    return status, err.getvalue()


FILES = [
    "torch/_C/TensorBase.pyi.fragment",
    "torch/_C/_VariableFunctions.pyi",
    "torch/_C/_nn.pyi",
    "torch/_VF.pyi",
    "torch/return_types.pyi",
]


def test_command_writes_the_stub_files_once(tmp_path: Path) -> None:
    assert run(tmp_path) == (0, "")
    out = tmp_path / "out"
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == FILES
    functions = (out / "torch/_C/_VariableFunctions.pyi").read_text()
    assert (out / "torch/_VF.pyi").read_text() == functions
    assert '    "peak",' in functions and "def scale(" in functions
    assert '"""' not in functions  # no docstrings without --docs
    stamps = {f: (out / f).stat().st_mtime_ns for f in FILES}
    assert run(tmp_path) == (0, "")
    assert {f: (out / f).stat().st_mtime_ns for f in FILES} == stamps  # unchanged: not rewritten


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    assert run(tmp_path, "--dry-run") == (0, "")
    assert not (tmp_path / "out").exists()


def test_bad_input_and_usage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, err = run(tmp_path, "--docs", str(tmp_path / "nowhere"))
    assert status == 1
    assert err.startswith(f"{tmp_path / 'nowhere'}:1: error: not a directory")
    status, err = run(tmp_path, "--deprecated", str(tmp_path / "deprecated.yaml"))
    assert (status, err.splitlines()[0]) == (
        1,
        f"{tmp_path / 'deprecated.yaml'}:1: error: no such file",
    )
    assert run(tmp_path, "--no-such-flag")[0] == 2
    assert "unrecognized arguments: --no-such-flag" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_docs_reach_functions_and_methods(tmp_path: Path) -> None:
    torch_docs = (
        "from torch._C import _add_docstr as add_docstr\n"
        'add_docstr(torch.scale, """\nscale(input) -> Tensor\n\nScales.\n""")\n'
    )
    tensor_docs = 'def add_docstr_all(m, d): pass\nadd_docstr_all("scale", "See torch.scale")\n'
    (tmp_path / "torch").mkdir()
    docs = docs_dir(tmp_path / "torch", torch_docs, tensor_docs)
    assert run(tmp_path, "--docs", docs) == (0, "")
    out = tmp_path / "out" / "torch"
    assert (
        "    *,\n"
        "    out: Tensor | None = None,\n"
        ") -> Tensor:\n"
        '    r"""\n'
        "    scale(input) -> Tensor\n"
        "\n"
        "    Scales.\n"
        '    """\n'
        "\n"
        "def " in (out / "_C/_VariableFunctions.pyi").read_text()
    )
    assert (
        "    def scale(self, factor: Number | _complex = 1) -> Tensor:\n"
        '        r"""\n'
        "        See torch.scale\n"
        '        """\n'
    ) in (out / "_C/TensorBase.pyi.fragment").read_text()


DEPRECATED_SPEC = """
- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
- func: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
"""
DEPRECATED = """
- name: add(Tensor self, Scalar alpha, Tensor other) -> Tensor
  aten: add(self, other, alpha)
- name: add(Tensor self, Scalar alpha, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
  aten: add_out(out, self, other, alpha)
"""


def test_deprecated_signatures_survive_hand_written_names(
    spec_of: SpecFromText, tmp_path: Path
) -> None:
    """`add`'s stubs are written by hand, but its deprecated argument orders are derived:
    the functional form, then the out= form, whose `out` is required."""
    spec = spec_of(DEPRECATED_SPEC)
    path = tmp_path / "deprecated.yaml"
    path.write_text(DEPRECATED)
    stubs = spec_stubs(spec.functions, load_deprecated(str(path)), SignatureSet(), HINTS)
    assert texts(stubs.functions) == {
        "add": [
            "def add(self: Tensor, alpha: Number | _complex, other: Tensor) -> Tensor: ...",
            "def add(\n"
            "    self: Tensor,\n"
            "    alpha: Number | _complex,\n"
            "    other: Tensor,\n"
            "    *,\n"
            "    out: Tensor,\n"
            ") -> Tensor: ...",
        ]
    }
    assert spec_stubs(spec.functions, (), SignatureSet(), HINTS).functions == {"add": []}
