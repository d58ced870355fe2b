"""The structseqs of python_return_types.h/.cpp, from small specs.

Functions with Python bindings are grouped by operator name and the groups
sorted; within a group, each distinct (C++ name, field names) gets one
structseq, its type object numbered by its place in the group.
"""

from __future__ import annotations

from collections.abc import Callable

from opgen.spec.model import Spec
from opgen.targets.python.return_types import Structseq, structseq_groups

SpecOf = Callable[[str], Spec]

MAX = """\
- func: max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
- func: max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, Tensor(b!) max_values) -> (Tensor(a!) values, Tensor(b!) indices)
- func: max.unique_dim(Tensor self, int dim, bool keepdim, bool unique) -> (Tensor values, Tensor indices)
- func: max(Tensor self) -> Tensor
"""  # noqa: E501


def test_each_name_and_fields_once_numbered_in_the_group(spec_of: SpecOf) -> None:
    # max.unique_dim repeats max.dim's structseq; the out= overload is `max_out`.
    assert structseq_groups(spec_of(MAX).functions) == [
        [
            Structseq("max", ("values", "indices"), "maxNamedTuple"),
            Structseq("max_out", ("values", "indices"), "max_outNamedTuple1"),
        ]
    ]


def test_groups_are_sorted_and_may_be_empty(spec_of: SpecOf) -> None:
    spec = spec_of(
        MAX
        + "- func: aminmax(Tensor self) -> (Tensor min, Tensor max)\n"
        + "- func: abs(Tensor self) -> Tensor\n"
    )
    assert [[s.getter for s in group] for group in structseq_groups(spec.functions)] == [
        [],
        ["get_aminmax_structseq"],
        ["get_max_structseq", "get_max_out_structseq"],
    ]


def test_functions_without_bindings_have_no_structseq(spec_of: SpecOf) -> None:
    spec = spec_of("- func: foo_backward(Tensor self) -> (Tensor grad_self, Tensor grad_other)\n")
    assert structseq_groups(spec.functions) == []


def test_names_and_fields_identify_a_structseq_joined_by_underscores(spec_of: SpecOf) -> None:
    # Fields `out_x, y` and fields `out, x_y` of `f` are both `f_out_x_y`: one structseq.
    spec = spec_of(
        "- func: f.one(Tensor self) -> (Tensor out_x, Tensor y)\n"
        "- func: f.two(Tensor self, int a) -> (Tensor out, Tensor x_y)\n"
        "- func: f.three(Tensor self, float b) -> (Tensor out, Tensor x)\n"
    )
    assert structseq_groups(spec.functions) == [
        [
            Structseq("f", ("out_x", "y"), "fNamedTuple"),
            Structseq("f", ("out", "x"), "fNamedTuple1"),
        ]
    ]
