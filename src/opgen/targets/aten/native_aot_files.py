"""NativeAotStubs.h and NativeAotStubs.cpp (torch 2.15 on): the stubs of the run's native
AOT declarations (see `native_aot`), declared and defined in the order of their operators."""

from __future__ import annotations

from collections.abc import Callable

from opgen.releases import NATIVE_AOT_STUBS
from opgen.spec.groups import NativeFunctionsGroup
from opgen.targets.aten.native_aot import NativeAotManifest, stub_declaration, stub_definition
from opgen.targets.aten.run import AtenRun
from opgen.targets.emitters import Emitted


def emit_native_aot_stub_declarations(run: AtenRun) -> Emitted:
    """NativeAotStubs.h (AtenPart.headers), torch 2.15 on."""
    return _emitted(run, "NativeAotStubs.h", "native_aot_stub_declarations", stub_declaration)


def emit_native_aot_stub_definitions(run: AtenRun) -> Emitted:
    """NativeAotStubs.cpp (AtenPart.sources), torch 2.15 on."""
    return _emitted(
        run, "NativeAotStubs.cpp", "native_aot_stub_definitions", lambda m, _: stub_definition(m)
    )


def _emitted(
    run: AtenRun,
    path: str,
    variable: str,
    render: Callable[[NativeAotManifest, NativeFunctionsGroup], str],
) -> Emitted:
    if not run.release.has(NATIVE_AOT_STUBS):
        return Emitted()
    stubs = run.native_aot  # read and checked with the run, as torchgen does before generating

    def env() -> dict[str, object]:
        # Ordered only when rendered: torchgen fails there, so a dry run passes.
        return {variable: [render(m, g) for m, g in stubs.in_file_order()]}

    out = run.outputs()
    out.cpu.add_template(path, env)
    return out.emitted()
