"""The `.pte` reader (`opgen.pte`): flatbuffers built here, field by field, read back.

Each program is written with `flatbuffers.Builder`, every field in the slot that
`program.fbs` declares it in (numbered here, independently of the reader's accessors),
so a reader that reads a wrong slot fails. Then: what the reader gives for each field and
for whole programs; fields left out; the file around the flatbuffer (extended header,
segments, bundled programs); and bad files, each a `PteError` (a `path: error: ...` from
`read_program`), never another exception, whatever the bytes.
"""

from __future__ import annotations

import contextlib
import io
import struct
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

flatbuffers = pytest.importorskip("flatbuffers")

from tests.pte_writer import (  # noqa: E402
    INT,
    NULL,
    OPTIONAL_TENSOR_LIST,
    TENSOR,
    TENSOR_LIST,
    Writer,
)

from opgen.diagnostics import SpecError  # noqa: E402
from opgen.pte.flatbuffer import PteError  # noqa: E402
from opgen.pte.header import load_program  # noqa: E402
from opgen.pte.program import (  # noqa: E402
    ArgumentMeta,
    ProgramOperators,
    program_operators,
    read_program,
)


def read(data: bytes) -> ProgramOperators:
    return program_operators(io.BytesIO(data))


def add_program(w: Writer | None = None) -> bytes:
    """One plan: `aten::add.out(a, b, alpha, out)` on float tensors of dim order (0, 1)."""
    w = w or Writer()
    values = [
        w.tensor(6, [0, 1]),
        w.tensor(6, [0, 1]),
        w.int_value(1),
        w.tensor(6, [0, 1]),
    ]
    op = w.operator("aten::add", "out")
    plan = w.plan("forward", [op], values, [[w.kernel_call(0, [0, 1, 2, 3, 3])]])
    return w.program([plan])


F01 = ArgumentMeta(TENSOR, 6, (0, 1))


def test_one_kernel_call() -> None:
    found = read(add_program())
    assert found.names == ("aten::add.out",)
    assert dict(found.kernel_calls) == {
        "aten::add.out": frozenset({(F01, F01, ArgumentMeta(INT), F01, F01)})
    }


def test_every_field_read() -> None:
    w = Writer()
    values = [
        w.tensor(3, [2, 0, 1]),  # 0: Int tensor, channels last
        w.tensor(-1, []),  # 1: a dtype past 127, read signed as the runtime does
        w.int_value(7),  # 2
        w.evalue(NULL),  # 3
        w.tensor_list(TENSOR_LIST, [0, 1]),  # 4: its first tensor
        w.tensor_list(TENSOR_LIST, []),  # 5: nothing to read: Null
        w.tensor_list(OPTIONAL_TENSOR_LIST, [-1, 3, 1, 0]),  # 6: its first tensor, 1
        w.tensor_list(OPTIONAL_TENSOR_LIST, [-1, 3]),  # 7: none: Null
        w.tensor(15, None),  # 8: no dim_order: empty
    ]
    ops = [w.operator("aten::cat", "out"), w.operator("aten::relu"), w.operator("unused", "")]
    chains = [
        [w.kernel_call(0, [4, 0]), w.delegate_call([0]), w.kernel_call(1, [6, 7, 5])],
        [w.kernel_call(0, [4, 0]), w.kernel_call(0, [8, 2, 3])],
    ]
    second = w.plan("second", [w.operator("aten::relu")], values[:1], [[w.kernel_call(0, [0])]])
    data = w.program([w.plan("forward", ops, values, chains), second])
    found = read(data)
    int_tensor = ArgumentMeta(TENSOR, 3, (2, 0, 1))
    assert found.names == ("aten::cat.out", "aten::relu", "unused", "aten::relu")
    assert dict(found.kernel_calls) == {
        "aten::cat.out": frozenset(
            {
                (int_tensor, int_tensor),
                (ArgumentMeta(TENSOR, 15, ()), ArgumentMeta(INT), ArgumentMeta(NULL)),
            }
        ),
        "aten::relu": frozenset(
            {
                (ArgumentMeta(TENSOR, -1, ()), ArgumentMeta(NULL), ArgumentMeta(NULL)),
                (int_tensor,),
            }
        ),
    }


def test_absent_fields_read_as_flatbuffers_defaults() -> None:
    w = Writer()
    empty_plan = w.table()  # no name, values, chains or operators
    assert read(w.program([empty_plan])) == ProgramOperators((), {})
    w = Writer()
    assert read(w.finish(w.table())) == ProgramOperators((), {})  # no execution_plan


def test_the_schema_accessors() -> None:
    w = Writer()
    plan = w.plan("forward", [w.operator("aten::add", "out")], [w.tensor(7, [0])])
    data = w.program([plan], segments=[(0, 16), (32, 8)])
    program = load_program(io.BytesIO(data))
    (p,) = program.execution_plan()
    assert p.name() == "forward" and p.values_length() == 1
    (op,) = p.operators()
    assert (op.name(), op.overload()) == ("aten::add", "out")
    assert p.chains() == []
    assert [(s.offset(), s.size()) for s in program.segments()] == [(0, 16), (32, 8)]


# The file around the flatbuffer.


def with_extended_header(data: bytes, segments: bytes = b"", header_length: int = 24) -> bytes:
    """`data` with an extended header at byte 8 (32 bytes inserted, the root offset moved
    past them, as ExecuTorch's serializer does), and `segments` after it."""
    inserted = 32
    (root,) = struct.unpack_from("<I", data, 0)
    program_size = len(data) + inserted
    base = (program_size + 15) // 16 * 16 if segments else 0
    header = struct.pack("<4sIQQ", b"eh00", header_length, program_size, base)
    body = struct.pack("<I", root + inserted) + data[4:8] + header.ljust(inserted, b"\0") + data[8:]
    return body + (b"\0" * (base - program_size) + segments if segments else b"")


def test_extended_header_and_segments() -> None:
    w = Writer()
    data = add_program(w)
    assert read(with_extended_header(data)) == read(data)
    w = Writer()
    plan = w.plan("forward", [w.operator("aten::add", "out")])
    data = w.program([plan], segments=[(0, 16), (16, 4)])
    assert read(with_extended_header(data, b"x" * 20)).names == ("aten::add.out",)


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (
            lambda d: d[:-1],
            "truncated: segment 1 (bytes 272 to 276) ends past the end of the 275-byte file",
        ),
        (
            lambda d: d[:100],
            "truncated: the extended header gives the program 256 bytes, and the file has 100",
        ),
        (
            lambda d: d[:12] + struct.pack("<I", 16) + d[16:],
            "corrupt: the extended header's length is 16 bytes, fewer than the 24 of its fields",
        ),
    ],
)
def test_bad_extended_headers(damage: object, message: str) -> None:
    w = Writer()
    plan = w.plan("forward", [w.operator("aten::add", "out")])
    data = with_extended_header(w.program([plan], segments=[(0, 16), (16, 4)]), b"x" * 20)
    assert len(data) == 276  # a 256-byte program, and segments 0 and 1 after it
    with pytest.raises(PteError) as e:
        read(damage(data))  # type: ignore[operator]
    assert str(e.value) == message


def test_a_vtable_shared_by_tables_of_other_sizes() -> None:
    """flatbuffers' Python builder before 24.12 shared a vtable between tables whose fields
    sit at the same offsets: a DataSegment whose offset is left out (its size 4 bytes in)
    points to the vtable of an 8-byte KernelCall. Fields are read where the vtable puts
    them, checked against the buffer, not against the size the vtable records."""
    w = Writer(shared_vtables=True)
    call = w.kernel_call(0, [0])
    plan = w.plan("forward", [w.operator("aten::relu", "out")], [w.tensor(6, [0])], [[call]])
    program = load_program(io.BytesIO(w.program([plan], segments=[(0, 48), (48, 16)])))
    segments = program.segments()
    assert [(s.offset(), s.size()) for s in segments] == [(0, 48), (48, 16)]
    data, pos = segments[0].table.buffer.data, segments[0].table._runtime.Pos
    vtable = pos - struct.unpack_from("<i", data, pos)[0]
    assert struct.unpack_from("<HHHH", data, vtable) == (8, 8, 0, 4)  # a KernelCall's


def bundled(program: bytes | None) -> bytes:
    w = Writer()
    fields = [] if program is None else [(2, "offset", w.bytes_(program))]
    return w.finish(w.table((0, "int32", 1), *fields), identifier=b"BP08")


def test_a_bundled_program_is_read_as_its_program() -> None:
    data = add_program()
    assert read(bundled(data)) == read(data)
    assert read(bundled(with_extended_header(data))) == read(data)
    with pytest.raises(PteError, match=r"^corrupt: the bundled program holds no program$"):
        read(bundled(None))
    with pytest.raises(PteError, match=r"^in the program of a bundled program \(bytes \d+ on\)"):
        read(bundled(data[:60]))


# Bad files.


def test_identifiers() -> None:
    data = add_program()
    with pytest.raises(PteError) as e:
        read(data[:4] + b"ET11" + data[8:])
    assert str(e.value) == (
        "an ExecuTorch program of another schema version: file identifier 'ET11' at byte 4, "
        "where opgen reads 'ET12' programs"
    )
    with pytest.raises(PteError) as e:
        read(b"PK\x03\x04 a zip file")
    assert str(e.value) == (
        "not an ExecuTorch program: the file identifier at byte 4 is b' a z', not 'ET12' "
        "(a .pte) or 'BP08' (a bundled program)"
    )
    with pytest.raises(PteError, match=r"^not an ExecuTorch program: the file has 5 bytes"):
        read(data[:5])


def inconsistent(op_index: int, args: Sequence[int]) -> bytes:
    """A plan calling operator `op_index` (of 1) with the values `args` (of 4)."""
    w = Writer()
    values = [w.tensor(6, [0]), w.int_value(1), w.tensor_list(TENSOR_LIST, [1]), w.evalue(TENSOR)]
    chain = [w.kernel_call(op_index, args)]
    return w.program([w.plan("forward", [w.operator("aten::add", "out")], values, [chain])])


CALL = "program.execution_plan[0].chains[0].instructions[0].instr_args"


@pytest.mark.parametrize(
    ("op_index", "args", "message"),
    [
        (2, [0], f"corrupt: {CALL}.op_index is 2, and the plan has 1 operator"),
        (0, [0, 5], f"corrupt: {CALL} refers to value 5, and the plan has 4 values"),
        (
            0,
            [2],  # a TensorList whose first item is an Int
            "corrupt: program.execution_plan[0].values[2].val.items[0] (value 1) is not a Tensor",
        ),
        (0, [3], "corrupt: program.execution_plan[0].values[3] is a Tensor without its table"),
    ],
)
def test_inconsistent_programs(op_index: int, args: list[int], message: str) -> None:
    with pytest.raises(PteError) as e:
        read(inconsistent(op_index, args))
    assert str(e.value) == message


def test_an_operator_without_a_name() -> None:
    w = Writer()
    data = w.program([w.plan("forward", [w.operator(None, "out")])])
    with pytest.raises(PteError) as e:
        read(data)
    assert str(e.value) == "corrupt: program.execution_plan[0].operators[0] has no name"


def test_every_truncation_is_an_error_or_cuts_only_padding() -> None:
    data = add_program()
    whole = read(data)
    for length in range(len(data)):
        with contextlib.suppress(PteError):
            assert read(data[:length]) == whole, length
    assert read(data[:-2]) == whole  # the last two bytes align the buffer's end


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_garbled_bytes_give_an_answer_or_a_pte_error(data: st.DataObject) -> None:
    good = bytearray(with_extended_header(add_program()))
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(good) - 1))
        good[at] = data.draw(st.integers(0, 255))
    with contextlib.suppress(PteError):
        read(bytes(good))


def test_read_program_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "model.pte"
    path.write_bytes(add_program()[:40])
    with pytest.raises(SpecError) as e:
        read_program(str(path))
    (diagnostic,) = e.value.diagnostics
    assert str(diagnostic) == (
        f"{path}: error: truncated or corrupt: the vtable of program (bytes 152 to 156) lies "
        "outside the 40-byte flatbuffer"
    )
    with pytest.raises(SpecError) as e:
        read_program(str(tmp_path / "missing.pte"))
    assert str(e.value) == f"{tmp_path / 'missing.pte'}: error: no such file"
    with pytest.raises(SpecError) as e:
        read_program(str(tmp_path))
    assert str(e.value) == f"{tmp_path}: error: is a directory, not a file"
    path.write_bytes(add_program())
    assert read_program(str(path)).names == ("aten::add.out",)
