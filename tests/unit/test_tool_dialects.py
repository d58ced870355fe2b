"""The tools on library and MLX specs: `--library` and `--mlx` on check, dump, diff and
coverage, and a spec read without the flag its dialect needs told as such, with the flag.

Small specs in the current directory (so that locations read short), the exact output
and diagnostics out.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from opgen.cli import main

# A library in its own namespace: a key of its own (`doc:`), an in-place operator that
# returns nothing (as PyTorch requires of custom operators), and a composite one: each is
# an error by the rules of PyTorch's own spec.
LIBRARY = """\
- func: toy::lerp3(Tensor a, Tensor b, float t) -> Tensor
  dispatch:
    CPU: lerp3_cpu
  doc: a + t * (b - a)
- func: toy::twice_(Tensor(a!) self) -> ()
  dispatch:
    CPU: twice_cpu
- func: toy::mix(Tensor a, Tensor b) -> Tensor
  dispatch:
    CompositeImplicitAutograd: mix
"""
# Its next version: an argument added with a default, a fake kernel, one operator gone
# and an argument renamed.
LIBRARY_V2 = """\
- func: toy::lerp3(Tensor a, Tensor b, float t, float u=1.0) -> Tensor
  dispatch:
    CPU: lerp3_cpu
  fake: kernels:lerp3_fake
  doc: a + t * (b - a)
- func: toy::mix(Tensor a, Tensor c) -> Tensor
  dispatch:
    CompositeImplicitAutograd: mix
"""
MLX = """\
- namespace: mlxlib
  module: ops
- func: mlxlib::scaled_add(Tensor a, Tensor b, *, float alpha=1.0) -> Tensor
  doc: a + alpha * b.
"""
MLX_V2 = """\
- namespace: mlxlib
  module: ops
- func: mlxlib::scaled_add(Tensor a, Tensor b, *, float beta=1.0) -> Tensor
  python_name: scaled_plus
  grad:
    a: grad
- func: mlxlib::twice(Tensor a) -> Tensor
"""
PYTORCH = """\
- func: relu(Tensor self) -> Tensor
  variants: function, method
  dispatch:
    CPU: relu
"""


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out, err)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture(autouse=True)
def specs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, text in (
        ("lib.yaml", LIBRARY),
        ("lib2.yaml", LIBRARY_V2),
        ("mlx.yaml", MLX),
        ("mlx2.yaml", MLX_V2),
        ("native.yaml", PYTORCH),
    ):
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)


# -- told apart: one error naming the flag, for each command -----------------------------


LIBRARY_TOLD = """\
lib.yaml:1:9: error: this is a library spec (operators in namespace 'toy'); read it with `opgen {command} --library`
  - func: toy::lerp3(Tensor a, Tensor b, float t) -> Tensor
          ^~~
"""  # noqa: E501
MLX_TOLD = """\
mlx.yaml:1:3: error: this is an MLX spec (it opens with the library settings 'namespace:'); read it with `opgen {command} --mlx`
  - namespace: mlxlib
    ^~~~~~~~~
"""  # noqa: E501


@pytest.mark.parametrize(
    ("argv", "told"),
    [
        (["check", "lib.yaml"], LIBRARY_TOLD.format(command="check")),
        (["dump", "lib.yaml"], LIBRARY_TOLD.format(command="dump")),
        (["diff", "lib.yaml", "lib2.yaml"], LIBRARY_TOLD.format(command="diff")),
        (
            ["coverage", "lib.yaml", "--against", "lib2.yaml"],
            LIBRARY_TOLD.format(command="coverage"),
        ),
        (["check", "mlx.yaml"], MLX_TOLD.format(command="check")),
        (["dump", "mlx.yaml"], MLX_TOLD.format(command="dump")),
        (["diff", "mlx.yaml", "mlx2.yaml"], MLX_TOLD.format(command="diff")),
        (["coverage", "mlx.yaml", "--against", "mlx2.yaml"], MLX_TOLD.format(command="coverage")),
        # Read by the other extension's rules.
        (["dump", "--library", "mlx.yaml"], MLX_TOLD.format(command="dump")),
    ],
)
def test_a_spec_read_without_its_flag_is_one_error_naming_it(argv: list[str], told: str) -> None:
    assert run(*argv) == (1, "", told)


def test_a_library_read_as_mlx_is_told_by_its_kernels() -> None:
    """Both are namespaced and may have `doc:`; MLX's kernels are for `cpu` and `gpu`."""
    assert run("check", "--mlx", "lib.yaml") == (
        1,
        "",
        "lib.yaml:10:5: error: this is a library spec ('CompositeImplicitAutograd' is a "
        "dispatch key of library specs); read it with `opgen check --library`\n"
        "      CompositeImplicitAutograd: mix\n"
        "      ^~~~~~~~~~~~~~~~~~~~~~~~~\n",
    )


def test_an_mlx_spec_with_errors_of_its_own_keeps_them() -> None:
    """Namespaced operators are MLX's too: read as MLX, they show no library."""
    Path("bad.yaml").write_text("- func: mlxlib::add(Tensor a, Scalar b) -> Tensor\n")
    status, _, err = run("check", "--mlx", "bad.yaml")
    assert status == 1 and err.startswith("bad.yaml:1:31: error: type 'Scalar' has no MLX meaning")


def test_a_library_key_alone_tells_a_library() -> None:
    Path("doc.yaml").write_text("- func: relu(Tensor x) -> Tensor\n  fake: kernels:relu_fake\n")
    assert run("check", "doc.yaml") == (
        1,
        "",
        "doc.yaml:2:3: error: this is a library spec ('fake:' is a key of library specs); "
        "read it with `opgen check --library`\n"
        "    fake: kernels:relu_fake\n"
        "    ^~~~\n",
    )


def test_a_key_of_mlx_tells_an_mlx_spec() -> None:
    Path("grad.yaml").write_text("- func: lib::scale(Tensor x) -> Tensor\n  grad:\n    x: grad\n")
    assert run("check", "--library", "grad.yaml") == (
        1,
        "",
        "grad.yaml:2:3: error: this is an MLX spec ('grad:' is a key of MLX specs); read it "
        "with `opgen check --mlx`\n"
        "    grad:\n"
        "    ^~~~\n",
    )


def test_a_pytorch_spec_read_as_a_library_is_told_to_drop_the_flag() -> None:
    assert run("check", "--library", "native.yaml") == (
        1,
        "",
        "native.yaml:2:3: error: this is a PyTorch spec ('variants:' drives ATen's own code "
        "generation); read it with `opgen check`, without --library\n"
        "    variants: function, method\n"
        "    ^~~~~~~~\n",
    )


def test_a_spec_that_shows_no_other_dialect_keeps_its_own_errors() -> None:
    Path("bad.yaml").write_text("- func: relu(Tensr self) -> Tensor\n")
    status, _, err = run("check", "bad.yaml")
    assert status == 1 and err.startswith("bad.yaml:1:14: error: unknown type 'Tensr'")


def test_another_files_errors_are_its_own() -> None:
    """A bad tags file beside a library is reported as it is, not as the library's dialect."""
    Path("tags.yaml").write_text("- tag: x\n  description: no\n")
    status, _, err = run("check", "lib.yaml")
    assert status == 1 and err.startswith("tags.yaml:")


# -- check ---------------------------------------------------------------------------------


def test_check_library_counts_its_warnings() -> None:
    assert run("check", "--library", "lib.yaml") == (
        0,
        "lib.yaml: ok: toy: 3 operators, 0 with gradient formulas (C++ and Python), 1 warning\n",
        "lib.yaml:1:9: warning: 'toy::lerp3' has no fake kernel (a Meta kernel or 'fake:'), so "
        "torch.compile and opcheck cannot trace it\n"
        "  - func: toy::lerp3(Tensor a, Tensor b, float t) -> Tensor\n"
        "          ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n",
    )


def test_mlx_is_a_switch_and_the_spec_the_positional_argument() -> None:
    assert run("check", "--mlx", "mlx.yaml") == (0, "mlx.yaml: ok: 1 operator\n", "")
    assert run("check", "mlx.yaml", "--mlx") == (0, "mlx.yaml: ok: 1 operator\n", "")


@pytest.mark.parametrize(
    ("argv", "problem"),
    [
        (["--mlx"], "--mlx needs the MLX spec"),
        (["--library"], "--library needs the library spec"),
        (["--library", "lib.yaml", "--backend", "b.yaml"], "--backend is checked against a "
         "PyTorch spec, not with --library"),
        (["--mlx", "mlx.yaml", "--aten-yaml-path", "n.yaml"], "--aten-yaml-path is checked "
         "against a PyTorch spec, not with --mlx"),
        (["native.yaml", "--package", "p"], "--package is for a library spec (--library)"),
        (["--library", "lib.yaml", "--no-derivatives"], "--no-derivatives is for an MLX spec "
         "(--mlx)"),
    ],
)  # fmt: skip
def test_check_flags_that_do_not_apply_are_usage_errors(argv: list[str], problem: str) -> None:
    assert run("check", *argv) == (2, "", f"opgen check: error: {problem}\n")


def test_library_and_mlx_contradict_each_other(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("check", "dump", "diff", "coverage"):
        assert main([command, "--library", "--mlx", "a.yaml", "b.yaml"]) == 2
        assert capsys.readouterr().err.endswith(
            f"opgen {command}: error: argument --mlx: not allowed with argument --library\n"
        )


# -- dump ------------------------------------------------------------------------------------


def test_dump_library_lists_its_operators_with_the_fields_that_apply() -> None:
    status, out, err = run("dump", "--library", "lib.yaml")
    assert (status, err) == (0, "")
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["name"] for r in records] == ["lerp3", "twice_", "mix"]
    assert records[0] == {
        "name": "lerp3",
        "namespace": "toy",
        "schema": "lerp3(Tensor a, Tensor b, float t) -> Tensor",
        "kind": "functional",
        "tags": [],
        "dispatch": {"CPU": {"kernel": "lerp3_cpu", "cpp_namespace": "toy::native"}},
        "python_dispatch": {},
        "fake": None,
        "doc": "a + t * (b - a)",
        "device_guard": True,
        "use_const_ref_for_mutable_tensors": False,
        "cpp_no_default_args": [],
        "line": 1,
    }
    assert records[1]["kind"] == "inplace"
    assert records[2]["dispatch"] == {
        "CompositeImplicitAutograd": {"kernel": "mix", "cpp_namespace": "toy::native"}
    }


def test_dump_library_signatures_are_the_cpp_dispatcher_and_native_ones() -> None:
    _, out, _ = run("dump", "--library", "lib.yaml", "--signatures")
    twice = json.loads(out.splitlines()[1])
    assert {key: twice[key] for key in ("cpp", "dispatcher", "native")} == {
        "cpp": ["void twice_(at::Tensor & self)"],
        "dispatcher": "void twice_(at::Tensor & self)",
        "native": {"CPU": "void twice_cpu(at::Tensor & self)"},
    }


def test_dump_mlx_lists_its_operators() -> None:
    status, out, err = run("dump", "--mlx", "mlx2.yaml", "--signatures")
    assert (status, err) == (0, "")
    assert [json.loads(line) for line in out.splitlines()] == [
        {
            "name": "scaled_add",
            "namespace": "mlxlib",
            "python_name": "scaled_plus",
            "schema": "scaled_add(Tensor a, Tensor b, *, float beta=1.0) -> Tensor",
            "kind": "composite",
            "dispatch": {},
            "shape": None,
            "gradients": ["a"],
            "doc": "",
            "line": 3,
            "python": "def scaled_plus(a: array, b: array, *, beta: float = 1.0, "
            "stream: StreamOrDevice = None) -> array",
        },
        {
            "name": "twice",
            "namespace": "mlxlib",
            "python_name": "twice",
            "schema": "twice(Tensor a) -> Tensor",
            "kind": "composite",
            "dispatch": {},
            "shape": None,
            "gradients": [],
            "doc": "",
            "line": 7,
            "python": "def twice(a: array, *, stream: StreamOrDevice = None) -> array",
        },
    ]


def test_dump_library_needs_the_spec() -> None:
    assert run("dump", "--library") == (
        2,
        "",
        "opgen dump: error: --library needs the library spec\n",
    )


# -- diff ------------------------------------------------------------------------------------


LIBRARY_DIFF = """\
lib2.yaml:6:28: error: [backward-incompatible/argument-renamed] toy::mix: argument 'b' is renamed to 'c' (was lib.yaml:8:28)
lib.yaml:5:14: error: [backward-incompatible/operator-removed] toy::twice_: operator removed: twice_(Tensor(a!) self) -> ()
lib2.yaml:1:49: note: [informational/argument-added] toy::lerp3: new argument 'float u=1.0' (was lib.yaml:1:14)
lib2.yaml:4:9: note: [informational/fake-changed] toy::lerp3: fake: none -> kernels:lerp3_fake (was lib.yaml:1:14)
opgen diff: 4 findings: 2 backward-incompatible, 0 forward-incompatible, 2 informational; 0 allowed
  2 backward-incompatible: 1 argument-renamed, 1 operator-removed
  2 informational: 1 argument-added, 1 fake-changed
"""  # noqa: E501

MLX_DIFF = """\
mlx2.yaml:3:3: error: [backward-incompatible/argument-renamed] mlxlib::scaled_add: argument 'alpha' is renamed to 'beta' (was mlx.yaml:3:3)
mlx2.yaml:3:3: error: [backward-incompatible/python-name-changed] mlxlib::scaled_add: Python name: scaled_add -> scaled_plus (was mlx.yaml:3:3)
mlx2.yaml:3:3: note: [informational/gradients-changed] mlxlib::scaled_add: gradients: +a (was mlx.yaml:3:3)
mlx2.yaml:7:3: note: [informational/operator-added] mlxlib::twice: new operator: twice(Tensor a) -> Tensor
opgen diff: 4 findings: 2 backward-incompatible, 0 forward-incompatible, 2 informational; 0 allowed
  2 backward-incompatible: 1 argument-renamed, 1 python-name-changed
  2 informational: 1 gradients-changed, 1 operator-added
"""  # noqa: E501


def test_diff_library_judges_the_schemas_by_pytorchs_rules() -> None:
    assert run("diff", "--library", "lib.yaml", "lib2.yaml") == (1, LIBRARY_DIFF, "")


def test_diff_mlx_judges_the_schemas_by_pytorchs_rules() -> None:
    assert run("diff", "--mlx", "mlx.yaml", "mlx2.yaml") == (1, MLX_DIFF, "")


def test_one_finding_is_one() -> None:
    Path("one.yaml").write_text(
        LIBRARY.replace("toy::mix(Tensor a, Tensor b)", "toy::mix(Tensor a, Tensor c)")
    )
    status, out, _ = run("diff", "--library", "lib.yaml", "one.yaml")
    assert (status, out.splitlines()[1:]) == (
        1,
        [
            "opgen diff: 1 finding: 1 backward-incompatible, 0 forward-incompatible, "
            "0 informational; 0 allowed",
            "  1 backward-incompatible: 1 argument-renamed",
        ],
    )


# -- coverage --------------------------------------------------------------------------------


def test_coverage_of_one_library_version_by_another() -> None:
    assert run("coverage", "--library", "lib2.yaml", "--against", "lib.yaml") == (
        0,
        "coverage of lib.yaml by lib2.yaml\n"
        "  group  implemented   total  percent\n"
        "  all            2       3    66.7%\n"
        "missing in all (1): toy::twice_\n",
        "",
    )


def test_coverage_of_a_list_of_names_by_an_mlx_spec() -> None:
    Path("wanted.txt").write_text("mlxlib::scaled_add\nmlxlib::twice\n")
    assert run("coverage", "--mlx", "mlx.yaml", "--against", "wanted.txt") == (
        0,
        "coverage of wanted.txt by mlx.yaml\n"
        "  group  implemented   total  percent\n"
        "  all            1       2    50.0%\n"
        "missing in all (1): mlxlib::twice\n",
        "",
    )
