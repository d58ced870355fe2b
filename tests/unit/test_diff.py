"""`opgen diff`: two small specs in, the report out, exactly, with every location.

The rules themselves (which schema change breaks which direction) are in
test_diff_rules.py, the allowlist in test_diff_allowlist.py; the agreement
with PyTorch's own checks is the conformance test test_diff_torch_rules.py.
"""

from __future__ import annotations

import io
import json
import os
import textwrap
from pathlib import Path

import pytest

from opgen.cli import main

OLD = """\
- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  variants: function, method
  dispatch:
    CPU: add_cpu
- func: gone(Tensor self) -> Tensor
- func: relu(Tensor self) -> Tensor
  tags: [pointwise]
- func: view_op(Tensor(a) self, int dim) -> Tensor(a)
- func: clamp(Tensor self, Scalar? min=None) -> Tensor
"""

NEW = """\
- func: add.Tensor(Tensor self, Tensor other, *, Scalar beta=1) -> Tensor
  variants: function, method
  dispatch:
    CPU: add_cpu
    CUDA: add_cuda
- func: relu(Tensor self, int extra=0) -> Tensor
- func: view_op(Tensor(b) self, SymInt dim) -> Tensor(b)
- func: clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor
- func: fresh(Tensor self) -> Tensor
"""

# Breaks first, in full; then the informational findings kind by kind (most
# frequent first, ties by name); then the totals and each category by kind.
EXPECTED = """\
new.yaml:1:50: error: [backward-incompatible/argument-renamed] add.Tensor: argument 'alpha' is renamed to 'beta' (was old.yaml:1:50)
new.yaml:7:17: error: [backward-incompatible/argument-alias-changed] view_op: argument 'self' is Tensor(b), not Tensor(a) (was old.yaml:8:17)
new.yaml:7:48: error: [backward-incompatible/return-alias-changed] view_op: return 0 is Tensor(b), not Tensor(a) (was old.yaml:8:45)
old.yaml:5:9: error: [backward-incompatible/operator-removed] gone: operator removed: gone(Tensor self) -> Tensor
new.yaml:6:27: note: [informational/argument-added] relu: new argument 'int extra=0' (was old.yaml:6:9)
new.yaml:8:46: note: [informational/argument-added] clamp: new argument 'Scalar? max=None' (was old.yaml:9:9)
new.yaml:7:33: note: [informational/argument-type-equivalent] view_op: argument 'dim' type int is now SymInt, the same type to the dispatcher (the C++ or Python signature may differ) (was old.yaml:8:33)
new.yaml:4:5: note: [informational/dispatch-changed] add.Tensor: dispatch: +CUDA (add_cuda) (was old.yaml:4:5)
new.yaml:9:9: note: [informational/operator-added] fresh: new operator: fresh(Tensor self) -> Tensor
new.yaml:6:9: note: [informational/tags-changed] relu: tags: -pointwise (was old.yaml:7:9)
opgen diff: 10 findings: 4 backward-incompatible, 0 forward-incompatible, 6 informational; 0 allowed
  4 backward-incompatible: 1 argument-alias-changed, 1 argument-renamed, 1 operator-removed, 1 return-alias-changed
  6 informational: 2 argument-added, 1 argument-type-equivalent, 1 dispatch-changed, 1 operator-added, 1 tags-changed
"""  # noqa: E501

# Four operators added, one removed, one kernel and one overload added.
FEW_OLD = """\
- func: a(Tensor self) -> Tensor
- func: b(Tensor self) -> Tensor
"""
MANY_NEW = """\
- func: a(Tensor self) -> Tensor
  dispatch:
    CPU: a_cpu
- func: c(Tensor self) -> Tensor
- func: d(Tensor self) -> Tensor
- func: e(Tensor self) -> Tensor
- func: f(Tensor self) -> Tensor
- func: a.x(Tensor self, int x) -> Tensor
"""


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out, err)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def specs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """old.yaml and new.yaml in the current directory, so that locations read short."""
    (tmp_path / "old.yaml").write_text(OLD)
    (tmp_path / "new.yaml").write_text(NEW)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_text_leads_with_the_breaks_then_each_informational_kind(specs: Path) -> None:
    assert run("diff", "old.yaml", "new.yaml") == (1, EXPECTED, "")


def test_text_shows_the_first_three_of_each_informational_kind(specs: Path) -> None:
    (specs / "a.yaml").write_text(FEW_OLD)
    (specs / "b.yaml").write_text(MANY_NEW)
    assert run("diff", "a.yaml", "b.yaml") == (
        1,
        """\
a.yaml:2:9: error: [backward-incompatible/operator-removed] b: operator removed: b(Tensor self) -> Tensor
b.yaml:4:9: note: [informational/operator-added] c: new operator: c(Tensor self) -> Tensor
b.yaml:5:9: note: [informational/operator-added] d: new operator: d(Tensor self) -> Tensor
b.yaml:6:9: note: [informational/operator-added] e: new operator: e(Tensor self) -> Tensor
... and 1 more informational/operator-added
b.yaml:3:5: note: [informational/dispatch-changed] a: dispatch: +CPU (a_cpu), -CompositeImplicitAutograd (was a.yaml:1:9)
b.yaml:8:9: note: [informational/overload-added] a.x: new overload: a.x(Tensor self, int x) -> Tensor
opgen diff: 7 findings: 1 backward-incompatible, 0 forward-incompatible, 6 informational; 0 allowed
  1 backward-incompatible: 1 operator-removed
  6 informational: 4 operator-added, 1 dispatch-changed, 1 overload-added
5 of 6 informational findings shown; to see every finding: --all, or --format json
""",  # noqa: E501
        "",
    )


def test_all_lists_every_finding_in_the_same_order(specs: Path) -> None:
    (specs / "a.yaml").write_text(FEW_OLD)
    (specs / "b.yaml").write_text(MANY_NEW)
    assert run("diff", "a.yaml", "b.yaml", "--all") == (
        1,
        """\
a.yaml:2:9: error: [backward-incompatible/operator-removed] b: operator removed: b(Tensor self) -> Tensor
b.yaml:4:9: note: [informational/operator-added] c: new operator: c(Tensor self) -> Tensor
b.yaml:5:9: note: [informational/operator-added] d: new operator: d(Tensor self) -> Tensor
b.yaml:6:9: note: [informational/operator-added] e: new operator: e(Tensor self) -> Tensor
b.yaml:7:9: note: [informational/operator-added] f: new operator: f(Tensor self) -> Tensor
b.yaml:3:5: note: [informational/dispatch-changed] a: dispatch: +CPU (a_cpu), -CompositeImplicitAutograd (was a.yaml:1:9)
b.yaml:8:9: note: [informational/overload-added] a.x: new overload: a.x(Tensor self, int x) -> Tensor
opgen diff: 7 findings: 1 backward-incompatible, 0 forward-incompatible, 6 informational; 0 allowed
  1 backward-incompatible: 1 operator-removed
  6 informational: 4 operator-added, 1 dispatch-changed, 1 overload-added
""",  # noqa: E501
        "",
    )


def test_all_adds_nothing_when_nothing_was_left_out(specs: Path) -> None:
    assert run("diff", "old.yaml", "new.yaml", "--all") == (1, EXPECTED, "")


def test_json_has_every_finding_in_the_findings_order_with_or_without_all(specs: Path) -> None:
    (specs / "a.yaml").write_text(FEW_OLD)
    (specs / "b.yaml").write_text(MANY_NEW)
    status, out, _ = run("diff", "a.yaml", "b.yaml", "--format", "json")
    assert status == 1
    assert [json.loads(line)["name"] for line in out.splitlines()] == [
        "a", "c", "d", "e", "f", "a.x", "b",
    ]  # fmt: skip
    assert run("diff", "a.yaml", "b.yaml", "--format", "json", "--all") == (status, out, "")


def test_json_has_one_object_per_finding(specs: Path) -> None:
    status, out, err = run("diff", "old.yaml", "new.yaml", "--format", "json")
    records = [json.loads(line) for line in out.splitlines()]
    assert (status, err, len(records)) == (1, "", 10)
    assert records[0] == {
        "name": "add.Tensor",
        "category": "backward-incompatible",
        "rule": "argument-renamed",
        "message": "argument 'alpha' is renamed to 'beta'",
        "old": {"file": "old.yaml", "line": 1, "column": 50},
        "new": {"file": "new.yaml", "line": 1, "column": 50},
        "breaks": ["backward", "forward"],
        "allowed": None,
    }
    assert records[-1]["new"] is None and records[-1]["rule"] == "operator-removed"


def test_a_spec_against_itself_reports_nothing(specs: Path) -> None:
    assert run("diff", "new.yaml", "new.yaml") == (0, "", "")


def test_only_informational_findings_exit_0(specs: Path) -> None:
    (specs / "more.yaml").write_text(NEW + "- func: extra(Tensor self) -> Tensor\n")
    status, out, _ = run("diff", "new.yaml", "more.yaml")
    assert status == 0
    assert out.splitlines()[0] == (
        "more.yaml:10:9: note: [informational/operator-added] extra: new operator: "
        "extra(Tensor self) -> Tensor"
    )


def test_a_missing_file_is_a_located_error(specs: Path) -> None:
    assert run("diff", "old.yaml", "missing.yaml") == (
        1,
        "",
        "missing.yaml:1: error: no such file\n",
    )


def test_older_specs_are_read_for_comparison(specs: Path) -> None:
    """What older PyTorch specs allowed and `opgen check` rejects: Dimname, a random
    operator without nondeterministic_seeded, a tag outside the tags file."""
    old = textwrap.dedent("""\
        - func: softmax.Dimname(Tensor self, Dimname dim) -> Tensor
        - func: rand_op(Tensor self) -> Tensor
          tags: retired_tag
        """)
    (specs / "older.yaml").write_text(old)
    status, out, _ = run("diff", "older.yaml", "older.yaml")
    assert (status, out) == (0, "")
    status, _, err = run("check", "older.yaml")
    assert status == 1 and "unknown type 'Dimname'" in err
    status, out, _ = run("diff", "older.yaml", "new.yaml")
    assert "older.yaml:1:9: error: [backward-incompatible/operator-removed] softmax.Dimname" in out


def test_a_removed_overload_is_named_so(specs: Path) -> None:
    (specs / "a.yaml").write_text(
        "- func: f(Tensor self) -> Tensor\n- func: f.x(Tensor self, int x) -> Tensor\n"
    )
    (specs / "b.yaml").write_text("- func: f(Tensor self) -> Tensor\n")
    status, out, _ = run("diff", "a.yaml", "b.yaml")
    assert status == 1
    assert out.splitlines()[0] == (
        "a.yaml:2:9: error: [backward-incompatible/overload-removed] f.x: overload removed: "
        "f.x(Tensor self, int x) -> Tensor"
    )


def test_derived_operators_point_at_the_autogen_that_derives_them(specs: Path) -> None:
    old = textwrap.dedent("""\
        - func: neg(Tensor self) -> Tensor
          dispatch:
            CPU: neg
          autogen: neg.out
        """)
    (specs / "a.yaml").write_text(old)
    (specs / "b.yaml").write_text(old.replace("  autogen: neg.out\n", ""))
    status, out, _ = run("diff", "a.yaml", "b.yaml")
    assert (status, out.splitlines()[:2]) == (
        1,
        [
            "a.yaml:4:12: error: [backward-incompatible/overload-removed] neg.out: overload "
            "removed: neg.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
            "b.yaml:1:9: note: [informational/autogen-changed] neg: autogen: -neg.out "
            "(was a.yaml:4:12)",
        ],
    )


def test_library_specs_compare_with_their_namespace(specs: Path) -> None:
    lib = textwrap.dedent("""\
        - func: mylib::scale(Tensor x, float factor) -> Tensor
          dispatch:
            CPU: scale_cpu
        """)
    (specs / "a.yaml").write_text(lib)
    (specs / "b.yaml").write_text(lib.replace("float factor", "float factor, int n"))
    status, out, _ = run("diff", "a.yaml", "b.yaml", "--library")
    assert status == 1
    assert out.splitlines()[0] == (
        "b.yaml:1:46: error: [backward-incompatible/argument-added-without-default] "
        "mylib::scale: new argument 'int n' has no default (was a.yaml:1:16)"
    )


def test_tags_beside_each_spec_are_read(specs: Path) -> None:
    os.mkdir("v1")
    (specs / "v1" / "native_functions.yaml").write_text(OLD)
    (specs / "v1" / "tags.yaml").write_text("- tag: pointwise\n  desc: elementwise\n")
    status, out, _ = run("diff", "v1/native_functions.yaml", "old.yaml")
    assert (status, out) == (0, "")
