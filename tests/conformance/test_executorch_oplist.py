"""`opgen executorch-oplist` and `executorch-op-variants` against ExecuTorch's own, live.

Upstream is the installed `executorch` wheel: `python -m
executorch.codegen.tools.gen_oplist` (which reads a model through its compiled
`selective_build` extension) and `python -m
executorch.codegen.tools.gen_selected_op_variants`, each run in a subprocess. For every
case both write `selected_operators.yaml` from the same flags, and the files must be
byte-identical; then each side's `selected_op_variants.h` is written from its own YAML,
and those must be byte-identical too.

The inputs: ExecuTorch's `add.pte` and kernel YAMLs (`OPGEN_EXECUTORCH_REFERENCE`,
default `../shared/executorch` beside the checkout; the cases that need them skip
without), and programs written here with `flatbuffers.Builder` (`Program`): several
plans, operators called and not, dtypes and dim orders, tensor lists, optional tensor
lists, kernels without tensors, an extended header with segments, a bundled program.
`--root_ops`, `--ops_dict` and `--include_all_operators` alone and with the files, in
the combinations upstream accepts (all of them). Where upstream fails, opgen must fail
too.
"""

from __future__ import annotations

import io
import struct
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import flatbuffers
import pytest
from tests.pte_writer import NULL, OPTIONAL_TENSOR_LIST, TENSOR_LIST, Writer

from opgen.cli import main

from .executorch_reference import KERNEL_YAMLS, reference

ADD_PTE = "extension/apple/ExecuTorch/__tests__/resources/add.pte"

# Programs, written as ExecuTorch's serializer lays them out.


@dataclass
class Plan:
    name: str
    operators: list[tuple[str, str]]  # (name, overload)
    # ("tensor", dtype, dim order), ("int", v), ("double", v), ("null",),
    # ("list", [items]), ("optional list", [items])
    values: list[tuple[object, ...]]
    # per chain: ("call", op index, [args]), ("delegate", [args]), ("move", a, b)
    chains: list[list[tuple[object, ...]]] = field(default_factory=list)


def program(plans: Sequence[Plan], segments: Sequence[tuple[int, int]] = ()) -> bytes:
    """A program's flatbuffer from its plans (`tests.pte_writer`)."""
    w = Writer()

    def value(v: tuple[object, ...]) -> int:
        kind, *rest = v
        if kind == "tensor":
            return w.tensor(rest[0], rest[1])  # type: ignore[arg-type]
        if kind == "int":
            return w.int_value(rest[0])  # type: ignore[arg-type]
        if kind == "double":
            return w.double_value(rest[0])  # type: ignore[arg-type]
        if kind == "null":
            return w.evalue(NULL, w.table())
        tag = TENSOR_LIST if kind == "list" else OPTIONAL_TENSOR_LIST
        return w.tensor_list(tag, rest[0])  # type: ignore[arg-type]

    def instruction(i: tuple[object, ...]) -> int:
        kind, *rest = i
        if kind == "call":
            return w.kernel_call(rest[0], rest[1])  # type: ignore[arg-type]
        if kind == "delegate":
            return w.delegate_call(rest[0])  # type: ignore[arg-type]
        return w.move_call(rest[0], rest[1])  # type: ignore[arg-type]

    tables = [
        w.plan(
            plan.name,
            [w.operator(name, overload) for name, overload in plan.operators],
            [value(v) for v in plan.values],
            [[instruction(i) for i in chain] for chain in plan.chains],
        )
        for plan in plans
    ]
    return w.program(tables, segments)


FORWARD = Plan(
    "forward",
    operators=[
        ("aten::add", "out"),
        ("aten::cat", "out"),
        ("aten::index", "Tensor_out"),
        ("aten::sym_size", "int"),
        ("aten::never_called", "out"),
        ("my_ops::no_overload", ""),
    ],
    values=[
        ("tensor", 6, [0, 1, 2, 3]),  # 0
        ("tensor", 6, [0, 2, 3, 1]),  # 1: channels last
        ("tensor", 3, [0, 1]),  # 2
        ("int", 1),  # 3
        ("double", 0.5),  # 4
        ("null",),  # 5
        ("list", [0, 1]),  # 6: read as its first tensor
        ("list", []),  # 7: Null
        ("optional list", [-1, 5, 2, 0]),  # 8: its first tensor, 2
        ("optional list", [-1, 5]),  # 9: Null
        ("tensor", 11, [0]),  # 10
        ("tensor", 4, []),  # 11: a scalar tensor
    ],
    chains=[
        [
            ("call", 0, [0, 0, 3, 0, 0]),
            ("call", 0, [1, 0, 4, 1, 1]),
            ("call", 0, [0, 0, 3, 0, 0]),  # the same again
            ("delegate", [0, 1]),
            ("call", 1, [6, 3, 0, 0]),
            ("call", 1, [7, 3, 2, 2]),
            ("move", 0, 1),
            ("call", 2, [2, 8, 10]),
            ("call", 2, [2, 9, 10]),
            ("call", 3, [11, 3, 3]),
        ],
        [("call", 5, [3, 4, 5]), ("call", 5, [4, 3, 5])],  # no tensor: the key is `v1`
    ],
)
SECOND = Plan(
    "second",
    operators=[("aten::add", "out"), ("aten::mul", "out")],
    values=[("tensor", 7, [0]), ("tensor", 7, [0]), ("int", 2)],
    chains=[[("call", 0, [0, 1, 2, 0, 0]), ("call", 1, [0, 1, 0])]],
)


def with_extended_header(data: bytes, segments: bytes) -> bytes:
    """ExecuTorch's layout: 32 bytes at byte 8 hold the extended header (the root offset
    moved past them), then the segments at the next 16-byte boundary."""
    (root,) = struct.unpack_from("<I", data, 0)
    size = len(data) + 32
    base = (size + 15) // 16 * 16
    header = struct.pack("<4sIQQ", b"eh00", 24, size, base).ljust(32, b"\0")
    program = struct.pack("<I", root + 32) + data[4:8] + header + data[8:]
    return program + b"\0" * (base - size) + segments


def bundled(program: bytes) -> bytes:
    b = flatbuffers.Builder(0)
    inner = b.CreateByteVector(program)
    b.StartObject(3)
    b.PrependUint32Slot(0, 1, 0)
    b.PrependUOffsetTRelativeSlot(2, inner, 0)
    b.Finish(b.EndObject(), file_identifier=b"BP08")
    return bytes(b.Output())


def programs() -> dict[str, bytes]:
    two_plans = program([FORWARD, SECOND])
    with_segments = program([FORWARD, SECOND], segments=[(0, 64), (64, 16)])
    return {
        "two_plans.pte": two_plans,
        "one_plan.pte": program([SECOND]),
        "no_calls.pte": program([Plan("forward", [("aten::add", "out")], [])]),
        "no_plans.pte": program([]),
        "segments.pte": with_extended_header(with_segments, bytes(range(80))),
        "bundled.bpte": bundled(two_plans),
    }


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("models")
    for name, data in programs().items():
        (directory / name).write_bytes(data)
    return directory


# The cases: flags, with {models} and {reference} standing for their directories.

ROOT_OPS = [
    "aten::add.out,aten::mul.out",
    "aten::add.out aten::mul.out  aten::sub.out",
    " aten::relu.out , ,aten::add.out,",
    "on,yes,a: b,1:20,aten::add.out",  # names PyYAML quotes
]
OPS_DICTS = [
    '{"aten::add.out": ["Float", "Int", "v1/6;0,1|6;0,1"], "aten::mul.out": []}',
    '{"aten::add.out": ["Bool", "QUInt4X2", " v1/3;0"], "my::op": ["Double", "Double"]}',
]
MODELS = ["two_plans.pte", "one_plan.pte", "no_calls.pte", "no_plans.pte", "segments.pte",
          "bundled.bpte"]  # fmt: skip

CASES: dict[str, list[str]] = {
    "nothing": [],
    "include_all": ["--include_all_operators"],
    "add.pte": ["--model_file_path={reference}/" + ADD_PTE],
    **{f"model {m}": [f"--model_file_path={{models}}/{m}"] for m in MODELS},
    **{f"root_ops {i}": [f"--root_ops={r}"] for i, r in enumerate(ROOT_OPS)},
    **{f"ops_dict {i}": [f"--ops_dict={d}"] for i, d in enumerate(OPS_DICTS)},
    **{f"schema {y}": [f"--ops_schema_yaml_path={{reference}}/{y}"] for y in KERNEL_YAMLS},
    "model and include_all": [
        "--model_file_path={models}/two_plans.pte",
        "--include-all-operators",
    ],
    "model and root_ops": ["--model_file_path={models}/two_plans.pte", "--root_ops=" + ROOT_OPS[0]],
    "model and ops_dict": ["--model_file_path={models}/segments.pte", "--ops_dict=" + OPS_DICTS[0]],
    "root_ops and ops_dict": ["--root_ops=" + ROOT_OPS[1], "--ops_dict=" + OPS_DICTS[1]],
    "root_ops and schema": [
        "--root_ops=" + ROOT_OPS[0],
        "--ops_schema_yaml_path={reference}/kernels/optimized/optimized.yaml",
    ],
    "model and schema": [
        "--model_file_path={reference}/" + ADD_PTE,
        "--ops_schema_yaml_path={reference}/kernels/portable/custom_ops.yaml",
    ],
    "everything": [
        "--model_file_path={models}/two_plans.pte",
        "--root_ops=" + ROOT_OPS[2],
        "--ops_dict=" + OPS_DICTS[0],
        "--ops_schema_yaml_path={reference}/kernels/portable/functions.yaml",
        "--include_all_operators",
    ],
}


def flags(case: str, models: Path) -> list[str]:
    return [expand(f, models) for f in CASES[case]]


def expand(flag: str, models: Path) -> str:
    """The flag with {models} and {reference}/FILE replaced by their paths (the test is
    skipped where a reference file is missing)."""
    flag = flag.replace("{models}", str(models))
    if "{reference}/" in flag:
        head, _, name = flag.partition("{reference}/")
        flag = head + str(reference(name))
    return flag


def upstream(tool: str, argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", f"executorch.codegen.tools.{tool}", *argv],
        capture_output=True,
        text=True,
        check=False,
    )


def opgen(*argv: str) -> tuple[int, str]:
    err = io.StringIO()
    return main(list(argv), out=io.StringIO(), err=err), err.getvalue()


@pytest.mark.parametrize("case", list(CASES))
def test_selected_operators_and_op_variants(case: str, models: Path, tmp_path: Path) -> None:
    argv = flags(case, models)
    theirs, ours = tmp_path / "upstream", tmp_path / "opgen"
    theirs.mkdir()
    done = upstream("gen_oplist", [*argv, f"--output_path={theirs}/selected_operators.yaml"])
    assert done.returncode == 0, done.stderr
    status, err = opgen("executorch-oplist", *argv, f"--output_path={ours}/selected_operators.yaml")
    assert (status, err) == (0, "")
    expected = (theirs / "selected_operators.yaml").read_bytes()
    assert (ours / "selected_operators.yaml").read_bytes() == expected

    done = upstream(
        "gen_selected_op_variants",
        [f"--yaml-file={theirs}/selected_operators.yaml", f"--output-dir={theirs}/"],
    )
    assert done.returncode == 0, done.stderr
    status, err = opgen(
        "executorch-op-variants",
        f"--yaml_file_path={ours}/selected_operators.yaml",
        f"--output_dir={ours}",
    )
    assert (status, err) == (0, "")
    header = (theirs / "selected_op_variants.h").read_bytes()
    assert (ours / "selected_op_variants.h").read_bytes() == header


def test_output_path_a_directory(models: Path, tmp_path: Path) -> None:
    theirs, ours = tmp_path / "upstream", tmp_path / "opgen"
    theirs.mkdir()
    ours.mkdir()
    argv = [f"--model_file_path={models}/two_plans.pte", "--root_ops=aten::relu.out"]
    assert upstream("gen_oplist", [*argv, f"--output_path={theirs}"]).returncode == 0
    assert opgen("executorch-oplist", *argv, f"--output_path={ours}") == (0, "")
    name = "selected_operators.yaml"
    assert (ours / name).read_bytes() == (theirs / name).read_bytes()


BAD_KERNEL_YAMLS = {
    "bad_schema.yaml": "- func: foo(Tensor x -> Tensor\n",
    "not_a_list.yaml": "op: add.out\n",
    "no_name.yaml": "- kernels: []\n",
    "op_not_a_string.yaml": "- op: 3\n",
}


@pytest.mark.parametrize(
    "argv",
    [
        ['--ops_dict={"aten::add.out": ["Half"]}'],
        ["--ops_dict={not json"],
        ['--ops_dict=["aten::add.out"]'],
        ["--model_file_path={models}/missing.pte"],
        ["--model_file_path={models}/truncated.pte"],
        *[[f"--ops_schema_yaml_path={{models}}/{name}"] for name in BAD_KERNEL_YAMLS],
    ],
    ids=lambda argv: argv[0].split("=")[0] + " " + argv[0].rsplit("/", 1)[-1][:24],
)
def test_what_upstream_rejects_opgen_rejects(argv: list[str], models: Path, tmp_path: Path) -> None:
    (models / "truncated.pte").write_bytes(programs()["two_plans.pte"][:300])
    for name, text in BAD_KERNEL_YAMLS.items():
        (models / name).write_text(text)
    argv = [expand(a, models) for a in argv]
    output = f"--output_path={tmp_path}/selected_operators.yaml"
    assert upstream("gen_oplist", [*argv, output]).returncode != 0
    status, err = opgen("executorch-oplist", *argv, output)
    assert status in (1, 2) and err
