"""`spec.partial.written_schemas`: operators' schemas taken from their `func:` lines alone."""

from __future__ import annotations

from opgen.spec.partial import written_schemas

SPEC = """\
- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  variants: function, method
- func: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)  # out=
  structured: True
- func: quantized::relu(Tensor self) -> Tensor
- func: "quoted(Tensor self) -> Tensor"
- func: long_one(Tensor self,
    int dim) -> Tensor
- func: abs(Tensor self) -> Tensor
  autogen: abs.out
"""


def test_plain_func_lines_give_their_schemas_and_namespaces() -> None:
    assert written_schemas(SPEC, ["add.out", "relu", "add.Tensor"]) == {
        "add.Tensor": (
            "aten",
            "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
        ),
        "add.out": (
            "aten",
            "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
        ),
        "relu": ("quantized", "relu(Tensor self) -> Tensor"),
    }


def test_what_no_line_writes_plainly_is_left_to_the_reader() -> None:
    # Quoted, continued on the next line, derived by autogen, or not in the spec at all.
    assert written_schemas(SPEC, ["quoted", "long_one", "abs.out", "mul.out"]) == {}


def test_only_the_names_asked_for() -> None:
    assert list(written_schemas(SPEC, ["abs"])) == ["abs"]
