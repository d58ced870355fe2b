"""`opgen executorch-oplist` reads every program of a corpus as ExecuTorch reads it.

The corpus (`pte_corpus`) is real models exported through ExecuTorch, each written again
by ExecuTorch's serializer under several flatbuffer layouts (a vtable shared whatever the
table's size, defaults written, fields padded apart, everything inline) and as a bundled
program: constant segments, delegate blobs in segments and inline, named data, mutable
buffers, several methods, the extended header.

For each program, two references, both live: ExecuTorch's own reading
(`deserialize_pte_binary`, the program's Python model) must give the operators, and per
kernel call the value kinds, dtypes and dim orders, that opgen's reader gives; and
ExecuTorch's `gen_oplist` must write the `selected_operators.yaml` opgen writes, byte
for byte. Then byte-mutants of the corpus: each gives an answer or a located error,
never a traceback or a hang.
"""

from __future__ import annotations

import io
import random
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from executorch.codegen.tools.gen_oplist import gen_oplist
from executorch.exir import schema
from executorch.exir._serialize._program import deserialize_pte_binary

from opgen.cli import main
from opgen.pte.flatbuffer import PteError
from opgen.pte.program import ArgumentMeta, ProgramOperators, program_operators

from .pte_corpus import NAMES, corpus


def kernel_type_tags() -> dict[str, int]:
    """The tag of each member of `union KernelTypes`, from the program schema the
    `executorch` wheel ships (a union's members are numbered from 1)."""
    text = (Path(schema.__file__).parent / "_serialize" / "program.fbs").read_text()
    members = re.search(r"union KernelTypes \{([^}]*)\}", text)
    assert members is not None
    names = [m.strip() for m in members.group(1).split(",") if m.strip()]
    return {name: tag for tag, name in enumerate(names, 1)}


TAGS = kernel_type_tags()


@pytest.fixture(scope="module")
def programs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("pte-corpus")
    for name, data in corpus().items():
        (directory / name).write_bytes(data)
    return directory


def executorch_reading(data: bytes) -> ProgramOperators:
    """What ExecuTorch's own reader holds, as opgen's reader states it: the operators of
    every plan, and per operator the distinct argument lists of its kernel calls (a tensor
    list read as its first tensor, an optional one as its first present tensor, else
    Null), as ExecuTorch's selective build reads them."""
    program = deserialize_pte_binary(data).program
    names: list[str] = []
    calls: dict[str, set[tuple[ArgumentMeta, ...]]] = {}

    def meta(plan: schema.ExecutionPlan, index: int) -> ArgumentMeta:
        value = plan.values[index].val
        if isinstance(value, schema.Tensor):
            return ArgumentMeta(TAGS["Tensor"], int(value.scalar_type), tuple(value.dim_order))
        if isinstance(value, (schema.TensorList, schema.OptionalTensorList)):
            present = [i for i in value.items if i != -1]
            tensors = [i for i in present if isinstance(plan.values[i].val, schema.Tensor)]
            if tensors:
                return meta(plan, tensors[0])
            return ArgumentMeta(TAGS["Null"])
        return ArgumentMeta(TAGS[type(value).__name__])

    for plan in program.execution_plan:
        operators = [f"{o.name}.{o.overload}" if o.overload else o.name for o in plan.operators]
        names.extend(operators)
        for chain in plan.chains:
            for instruction in chain.instructions:
                call = instruction.instr_args
                if isinstance(call, schema.KernelCall):
                    args = tuple(meta(plan, i) for i in call.args)
                    calls.setdefault(operators[call.op_index], set()).add(args)
    return ProgramOperators(tuple(names), {op: frozenset(c) for op, c in calls.items()})


def inner_program(name: str, programs: Path) -> bytes:
    """The program a corpus file holds: itself, or the program its bundle holds."""
    return (programs / name.replace(".bpte", ".pte")).read_bytes()


@pytest.mark.parametrize("name", NAMES)
def test_the_operators_executorch_reads(name: str, programs: Path) -> None:
    ours = program_operators(io.BytesIO((programs / name).read_bytes()))
    theirs = executorch_reading(inner_program(name, programs))
    assert ours.names == theirs.names
    assert dict(ours.kernel_calls) == dict(theirs.kernel_calls)
    assert ours.kernel_calls  # every model calls kernels


@pytest.mark.parametrize("name", NAMES)
def test_the_selected_operators_gen_oplist_writes(
    name: str, programs: Path, tmp_path: Path
) -> None:
    theirs, ours = tmp_path / "upstream.yaml", tmp_path / "opgen.yaml"
    gen_oplist(output_path=str(theirs), model_file_path=str(programs / name))
    err = io.StringIO()
    argv = ["executorch-oplist", f"--model_file_path={programs / name}", f"--output_path={ours}"]
    assert main(argv, out=io.StringIO(), err=err) == 0, err.getvalue()
    assert ours.read_bytes() == theirs.read_bytes()


def mutants(programs: Path, count: int, seed: int) -> Iterator[tuple[str, bytes]]:
    """`count` programs of the corpus, each with one to four bytes set at random."""
    rng = random.Random(seed)
    files = sorted(programs.iterdir())
    for _ in range(count):
        file = rng.choice(files)
        data = bytearray(file.read_bytes())
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        yield file.name, bytes(data)


def test_mutants_give_an_answer_or_a_located_error(programs: Path) -> None:
    answered = refused = 0
    for name, data in mutants(programs, 500, seed=20261129):
        start = time.perf_counter()
        try:
            program_operators(io.BytesIO(data))
            answered += 1
        except PteError:
            refused += 1
        except Exception as e:  # pragma: no cover - what the test is for
            pytest.fail(f"a mutant of {name} raised {type(e).__name__}: {e}")
        assert time.perf_counter() - start < 2, f"a mutant of {name} took too long"
    assert answered and refused  # both kinds of mutant occur
