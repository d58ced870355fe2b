"""The ATen Operators API: `at::_ops::<op>` structs and their definitions.

Every operator gets a struct `at::_ops::<op>_<overload>` (the overload-
disambiguated name) declaring its schema type, its name, overload name and
schema string, and two entry points in the dispatcher convention: `call` and
`redispatch` (which takes a `DispatchKeySet` first). The C++ API, Tensor
methods and redispatch functions are all thin wrappers over these.

- Declarations go to `Operators.h` (function-only operators) and
  `MethodOperators.h` (operators with a Tensor method), or with
  per-operator headers to `ops/<root>_ops.h`.
- Definitions go to `Operators_<N>.cpp` (5 shards, by root name) and
  `OperatorsEverything.cpp` (emitter `emit_operators_sources`, part
  `sources`). Each looks up the operator handle once (a static local) and
  calls it; with static dispatch, `call` calls a backend kernel instead
  (see `static_dispatch`).

The schema string is a C++ literal of the schema's text (backslashes,
quotes and control characters escaped as torchgen's `cpp_string` does).
"""

from __future__ import annotations

from collections.abc import Sequence

from opgen.api.cpp_literals import cpp_string
from opgen.api.signatures import FunctionSignatures
from opgen.spec.backend import BackendIndex
from opgen.spec.native import NativeFunction
from opgen.targets.aten import static_dispatch
from opgen.targets.aten.functions import ArgumentTranslations
from opgen.targets.aten.run import AtenRun
from opgen.targets.emitters import Emitted


def declaration(sigs: FunctionSignatures) -> str:
    """The `at::_ops` struct of one operator."""
    f = sigs.f
    sig = sigs.dispatcher
    name = f.func.name.unambiguous_name()
    # Emitted C++ as torchgen writes it (byte-identical output). The `at::_ops` struct.
    return f"""
struct TORCH_API {name} {{
  using schema = {sig.type()};
  using ptr_schema = schema*;
  // See Note [static constexpr char* members for windows NVCC]
  static constexpr const char* name = "aten::{f.func.name.name}";
  static constexpr const char* overload_name = "{f.func.name.overload_name}";
  static constexpr const char* schema_str = {cpp_string(str(f.func))};
  static {sig.defn(name="call")};
  static {sig.defn(name="redispatch", is_redispatching_fn=True)};
}};"""


def definition(
    sigs: FunctionSignatures, static_backends: Sequence[BackendIndex], calls: ArgumentTranslations
) -> str:
    """The handle lookup, `call` and `redispatch` of one operator."""
    f = sigs.f
    sig = sigs.dispatcher
    name = f.func.name.unambiguous_name()
    schema = str(f.func)
    names = ", ".join([b.name for b in sig.arguments()])
    redispatch_names = f"dispatchKeySet, {names}" if names else "dispatchKeySet"
    handle = f"create_{name}_typed_handle"
    if static_backends:
        call_body = static_dispatch.body(sigs, static_backends, calls)
    else:
        call_body = _through_handle(handle, "call", names)
    return f"""
// aten::{schema}
static C10_NOINLINE c10::TypedOperatorHandle<{name}::schema> {handle}() {{
  return c10::Dispatcher::singleton()
      .findSchemaOrThrow({name}::name, {name}::overload_name)
      .typed<{name}::schema>();
}}

// aten::{schema}
{sig.defn(name=f"{name}::call")} {{
    {call_body}
}}

// aten::{schema}
{sig.defn(name=f"{name}::redispatch", is_redispatching_fn=True)} {{
    {_through_handle(handle, "redispatch", redispatch_names)}
}}
"""


def _through_handle(handle: str, method: str, arguments: str) -> str:
    return f"""
    static auto op = {handle}();
    return op.{method}({arguments});"""


def static_backends(run: AtenRun) -> list[BackendIndex]:
    """The backends `--static-dispatch-backend` names, in the order given."""
    return [run.backend_index(key) for key in run.options.static_dispatch_keys]


def emit_operators_sources(run: AtenRun) -> Emitted:
    """`Operators_<N>.cpp` and `OperatorsEverything.cpp` (part: sources)."""
    backends = static_backends(run)
    signatures = run.signatures
    calls = ArgumentTranslations()

    def env(f: NativeFunction) -> dict[str, list[str]]:
        return {
            "operator_headers": [f"#include <ATen/ops/{f.root_name}.h>"],
            "definitions": [definition(signatures.of(f), backends, calls)],
        }

    outputs = run.outputs()
    outputs.cpu.add_sharded(
        "Operators.cpp",
        run.spec.functions,
        key=lambda f: f.root_name,
        env=env,
        base_env={"static_dispatch_extra_headers": static_dispatch.extra_headers(backends)},
        num_shards=5,
        sharded_keys={"operator_headers", "definitions", "static_dispatch_extra_headers"},
    )
    return outputs.emitted()
