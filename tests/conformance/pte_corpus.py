"""A corpus of ExecuTorch programs (`.pte`) as ExecuTorch itself writes them.

Each program starts as a real model exported through ExecuTorch (`to_edge`, delegation to
the demo backends the `executorch` wheel ships, `to_executorch`), so it holds what real
programs hold: constants in a constant segment, delegate blobs in segments or inline,
named data, mutable buffers, several methods, the extended header. Each is then written
again, by ExecuTorch's own serializer from its own reading of the file
(`deserialize_pte_binary`, `serialize_pte_binary`), under each *layout*: how the
flatbuffers builder lays out tables.

- `current`: the installed `flatbuffers` package, as ExecuTorch writes programs today;
- `shared_vtables`: as `flatbuffers` before 24.12 wrote them, one vtable shared by any
  tables whose present fields sit at the same offsets, whatever their sizes, so a table's
  recorded size may be another table's (ExecuTorch's programs of that time are so);
- `defaults_written`: every scalar written even when it holds its default
  (`Builder.ForceDefaults`), as other writers do;
- `padded`: four bytes of padding after every field, so fields do not sit where a
  packed layout puts them;
- `inline`: everything in the flatbuffer (no extended header, no segments), as programs
  were written before segments existed.

Every program is also wrapped in a bundled program (`.bpte`), as ExecuTorch's devtools
write one. Exporting needs torch and ExecuTorch's Python dependencies (`ruamel.yaml`,
`tabulate`); only the tests import this module.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import flatbuffers
import torch
from executorch.exir import ExecutorchBackendConfig, to_edge
from executorch.exir._serialize import _flatbuffer_program
from executorch.exir._serialize._program import (
    PTEFile,
    deserialize_pte_binary,
    serialize_pte_binary,
)
from executorch.exir.backend.test.backend_with_named_data_map import BackendWithNDMPartitioner
from executorch.exir.backend.test.op_partitioner_demo import AddMulPartitionerDemo
from tests.pte_writer import VtablesByFieldOffsets


class _LinearConv(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(4, 3)
        self.conv = torch.nn.Conv2d(3, 2, 1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y = torch.relu(self.linear(x))
        return self.conv(y.reshape(1, 3, 2, 1)), torch.cat([y, y]).to(torch.int64)


class _AddMul(torch.nn.Module):
    def forward(
        self, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.sin(a * b + c), torch.mm(a, b)


class _MutableBuffer(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("state", torch.zeros(2, 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.state.add_(x)
        return self.state * 2


class _NamedData(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.cos(x + x)
        return torch.sin(y + y) - y


def _export(module: torch.nn.Module, *args: torch.Tensor) -> Any:
    return torch.export.export(module, args)


def exported_programs() -> dict[str, tuple[bytes, bool]]:
    """Each model's program, as ExecuTorch exports it, and whether its delegate blobs
    are in segments."""
    x = torch.randn(2, 4)
    abc = (torch.randn(2, 2), torch.randn(2, 2), torch.randn(2, 2))
    delegated = to_edge(_export(_AddMul(), *abc)).to_backend(AddMulPartitionerDemo())
    named = to_edge(_export(_NamedData(), torch.randn(1, 2)))
    methods = {"forward": _export(_LinearConv(), x), "add_mul": _export(_AddMul(), *abc)}
    managers: dict[str, Callable[[], Any]] = {
        "constants": lambda: to_edge(_export(_LinearConv(), x)).to_executorch(),
        "constants_aligned": lambda: to_edge(_export(_LinearConv(), x)).to_executorch(
            ExecutorchBackendConfig(segment_alignment=4096, constant_tensor_alignment=64)
        ),
        "delegate_in_segment": lambda: delegated.to_executorch(),
        "delegate_inline": lambda: delegated.to_executorch(
            ExecutorchBackendConfig(extract_delegate_segments=False)
        ),
        "named_data": lambda: named.to_backend(BackendWithNDMPartitioner()).to_executorch(),
        "mutable_buffer": lambda: to_edge(
            _export(_MutableBuffer(), torch.randn(2, 2))
        ).to_executorch(),
        "two_methods": lambda: to_edge(methods).to_executorch(),
    }
    inline = {"delegate_inline"}
    return {name: (bytes(make().buffer), name not in inline) for name, make in managers.items()}


def _shared_vtables(builder: Any) -> None:
    builder.vtables = VtablesByFieldOffsets()


def _defaults_written(builder: Any) -> None:
    builder.ForceDefaults(True)


def _padded(builder: Any) -> None:
    slot = builder.Slot

    def padded_slot(slotnum: int) -> None:
        slot(slotnum)  # where the field just written is
        builder.Prep(1, 4)  # room for
        builder.Pad(4)  # a gap before the next one

    builder.Slot = padded_slot


LAYOUTS: dict[str, Callable[[Any], None] | None] = {
    "current": None,
    "shared_vtables": _shared_vtables,
    "defaults_written": _defaults_written,
    "padded": _padded,
}


@contextlib.contextmanager
def _builders(layout: Callable[[Any], None] | None) -> Iterator[None]:
    """Every flatbuffers.Builder ExecuTorch's serializer makes meanwhile, laid out so."""
    if layout is None:
        yield
        return
    original = flatbuffers.Builder

    class Builder(original):  # type: ignore[misc,valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            layout(self)

    flatbuffers.Builder = Builder
    try:
        yield
    finally:
        flatbuffers.Builder = original


def rewritten(data: bytes, layout: str, delegates_in_segments: bool) -> bytes:
    """The program `data` written again by ExecuTorch's serializer, under `layout`."""
    pte = deserialize_pte_binary(data)
    if layout == "inline":  # the program alone: constants and delegate blobs inline
        return bytes(_flatbuffer_program._program_to_flatbuffer(pte.program).data)
    with _builders(LAYOUTS[layout]):
        return bytes(
            serialize_pte_binary(
                PTEFile(pte.program, pte.mutable_data, pte.named_data),
                extract_delegate_segments=delegates_in_segments,
            )
        )


def bundled(program: bytes) -> bytes:
    """A bundled program holding `program`, without test cases, laid out as ExecuTorch's
    devtools write one (`bundled_program_schema.fbs`: version, method_test_suites, and
    program, a byte vector aligned to 32), whose package needs pandas to import."""
    b = flatbuffers.Builder(0)
    b.StartVector(1, len(program), 32)
    b.head -= len(program)
    b.Bytes[b.head : b.head + len(program)] = program
    inner = b.EndVector()
    b.StartVector(4, 0, 4)
    suites = b.EndVector()
    b.StartObject(3)
    b.PrependUint32Slot(0, 0, 0)
    b.PrependUOffsetTRelativeSlot(1, suites, 0)
    b.PrependUOffsetTRelativeSlot(2, inner, 0)
    b.Finish(b.EndObject(), file_identifier=b"BP08")
    return bytes(b.Output())


MODELS = [
    "constants",
    "constants_aligned",
    "delegate_in_segment",
    "delegate_inline",
    "named_data",
    "mutable_buffer",
    "two_methods",
]
NAMES = [
    *(f"{model}.{layout}.pte" for model in MODELS for layout in [*LAYOUTS, "inline"]),
    *(f"{model}.current.bpte" for model in MODELS),
]


def corpus() -> dict[str, bytes]:
    """Every program of the corpus, by file name (NAMES): `{model}.{layout}.pte`, and
    each model's bundled program, `{model}.current.bpte`."""
    programs: dict[str, bytes] = {}
    exported = exported_programs()
    assert list(exported) == MODELS
    for model, (data, delegates_in_segments) in exported.items():
        for layout in [*LAYOUTS, "inline"]:
            programs[f"{model}.{layout}.pte"] = rewritten(data, layout, delegates_in_segments)
        programs[f"{model}.current.bpte"] = bundled(programs[f"{model}.current.pte"])
    assert sorted(programs) == sorted(NAMES)
    return programs
