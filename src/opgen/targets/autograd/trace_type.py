"""`TraceType_<n>.cpp`: the Tracer kernels, which record operator calls in a JIT trace.

Every native function but the hand-written ones (`MANUAL_TRACER`) gets a
kernel for the `Tracer` dispatch key. While a trace is being recorded, the
kernel creates a graph node named after the operator, records the inputs
(`jit::tracer::addInputs`), redispatches below the Tracer key with tracing
switched off, and records the outputs (`addOutput`). Functions without a
tensor result, or taking a `Storage`, are not recorded (`should_trace`);
neither are the composites in `DONT_RECORD_TRACE`, whose parts are traced
instead.

`torch.jit.trace(..., _force_outplace=True)` records inplace and out=
operators as their out-of-place ones: the kernel chooses the node's name,
and for out= operators the inputs and outputs, at run time
(`tracer_state->force_outplace`). `zero_` and `fill_` have no out-of-place
operator, so they are recorded as `zeros_like` and `full_like`
(`RENAME_TRACE`), with the arguments those take added (`RENAME_TRACE_ADD_ARGS`).

Unlike the other autograd kernels, TraceType covers every function of the
spec, whatever the operator selection: tracing sources are not part of a
selective build. Facts from torchgen/packaged/autograd/gen_trace_type.py.
"""

from __future__ import annotations

from opgen.api import cpp
from opgen.api.signatures import FunctionSignatures
from opgen.autograd.tracing import should_trace
from opgen.spec.keys import SchemaKind
from opgen.spec.native import NativeFunction
from opgen.targets.autograd.run import AutogradRun, emitted
from opgen.targets.autograd.wrappers import (
    MANUAL_TRACER,
    autograd_shards,
    get_return_value,
    method_definition,
    tie_return_values,
    type_wrapper_name,
    wrapper_formals,
    wrapper_registration,
)
from opgen.targets.emitters import Emitted
from opgen.template import Template

# Operators recorded under another name: `zero_` and `fill_` have no out-of-place form.
RENAME_TRACE = {"zero": "zeros_like", "fill": "full_like"}

# What the renamed operators take beyond the inplace one's arguments (TensorOptions
# and a memory format), recorded as their defaults when forced out of place.
_LIKE_FACTORY_DEFAULTS = (
    '    jit::tracer::addInputs(node, "options", ::std::optional<ScalarType>());\n'
    '    jit::tracer::addInputs(node, "options", layout_or_default(::std::nullopt));\n'
    '    jit::tracer::addInputs(node, "options", device_or_default(::std::nullopt));\n'
    '    jit::tracer::addInputs(node, "options", pinned_memory_or_default(::std::nullopt));\n'
    "    ::std::optional<MemoryFormat> memory_format = c10::MemoryFormat::Preserve;\n"
    '    jit::tracer::addInputs(node, "memory_format", memory_format);\n'
)
RENAME_TRACE_ADD_ARGS = {"fill": _LIKE_FACTORY_DEFAULTS, "zero": _LIKE_FACTORY_DEFAULTS}

# The redispatch skips every key up to and including Tracer.
_BELOW_TRACER = (
    "ks & c10::DispatchKeySet(c10::DispatchKeySet::FULL_AFTER, c10::DispatchKey::Tracer)"
)

# A run-time choice between two blocks; the text starts with an empty line.
_SELECT = Template("\nif (${cond}) {\n  ${true}\n} else {\n  ${false}\n}\n")

# Emitted C++ as torchgen writes it (byte-identical output). The node before the call.
_PRE_RECORD = Template(
    """\
torch::jit::Node* node = nullptr;
std::shared_ptr<jit::tracer::TracingState> tracer_state;
if (jit::tracer::isTracing()) {
  tracer_state = jit::tracer::getTracingState();
  at::Symbol op_name;
  ${set_op_name}
  node = tracer_state->createNode(op_name, /*num_outputs=*/0);
  jit::tracer::recordSourceLocation(node);
  ${add_trace_inputs}
  tracer_state->insertNode(node);
  ${inplace_guard}
  jit::tracer::setTracingState(nullptr);
}
"""
)

# Emitted C++ as torchgen writes it (byte-identical output). The outputs, after the call.
_POST_RECORD = Template(
    """\
if (tracer_state) {
  jit::tracer::setTracingState(std::move(tracer_state));
  ${add_trace_outputs}
}
"""
)


def _select(cond: str, true: str, false: str) -> str:
    return _SELECT.substitute(cond=cond, true=true, false=false)


def _set_op_name(trace_name: str) -> str:
    return f'op_name = c10::Symbol::fromQualString("aten::{trace_name}");\n'


def _renamed(name: str) -> str:
    return RENAME_TRACE.get(name, name)


def _records_out_of_place(f: NativeFunction) -> bool:
    """Inplace and out= operators (not dunder ones): forcing out of place changes them."""
    return (
        f.func.kind in (SchemaKind.inplace, SchemaKind.out) and not f.func.name.name.dunder_method
    )


def trace_op_name(f: NativeFunction) -> str:
    """Sets `op_name`: the operator's name, or a choice of out-of-place and inplace names."""
    name = f.func.name.name
    # An out= operator shares its JIT name with the functional one.
    if f.func.kind in (SchemaKind.functional, SchemaKind.out) or name.dunder_method:
        return _set_op_name(_renamed(str(name)))
    return _select(
        "tracer_state->force_outplace",
        _set_op_name(_renamed(name.base)),
        _set_op_name(_renamed(cpp.name(f.func))),
    )


def _add_input(name: str, value: str) -> str:
    return f'jit::tracer::addInputs(node, "{name}", {value});'


def _is_factory(f: NativeFunction) -> bool:
    """A factory's out-of-place form takes TensorOptions, which its out= form lacks.

    `normal` counts as one in every overload: the old generator decided per base
    name, and some overloads of `normal` are factories.
    """
    if f.category_override == "factory" or f.func.name.name.base == "normal":
        return True
    has_tensor_return = any(r.type.is_tensor_like() for r in f.func.returns)
    return has_tensor_return and not any(
        a.type.is_tensor_like() for a in f.func.arguments.flat_non_out
    )


def _out_options_inputs() -> list[str]:
    """The TensorOptions of the out argument, standing in for a factory's options."""
    return [
        _add_input("out", "c10::optTypeMetaToScalarType(out.options().dtype_opt())"),
        _add_input("out", "out.options().layout()"),
        _add_input("out", "out.options().device()"),
        _add_input("out", "out.options().pinned_memory()"),
    ]


def trace_inputs(f: NativeFunction) -> str:
    """The `addInputs` calls; for out= functions the out arguments only when kept inplace."""
    outs = f.func.arguments.out
    args = list(f.func.schema_order_arguments())
    if outs:
        args = args[: -len(outs)]
    lines = [_add_input(a.name, a.name) for a in args]
    if outs:
        outplace = _out_options_inputs() if _is_factory(f) else []
        inplace = [_add_input(a.name, a.name) for a in outs]
        lines.append(
            _select("tracer_state->force_outplace", "\n".join(outplace), "\n".join(inplace))
        )
    return "\n".join(lines)


def pre_record_trace(f: NativeFunction) -> str:
    """Creates the node and records the inputs, if tracing (for a traced function)."""
    inputs = trace_inputs(f)
    guard = ""
    if _records_out_of_place(f):
        added = RENAME_TRACE_ADD_ARGS.get(f.func.name.name.base)
        if added:
            inputs += _select("tracer_state->force_outplace", added, "")
        outs = f.func.arguments.out
        mutated = outs[0].name if outs else "self"
        guard = f'jit::tracer::ensureUniqueIfOutOfPlaced("{cpp.name(f.func)}", {mutated});\n'
    return _PRE_RECORD.substitute(
        set_op_name=trace_op_name(f), add_trace_inputs=inputs, inplace_guard=guard
    )


def _add_outputs(names: list[str]) -> list[str]:
    return [f"jit::tracer::addOutput(node, {name});" for name in names]


def post_record_trace(f: NativeFunction) -> str:
    """Restores the tracing state and records the outputs (for a traced function).

    Forced out of place, an out= operator's outputs are its out arguments; kept
    inplace, its returns (the same names in most functions: one block then).
    """
    returned = cpp.return_names(f)
    outs = [a.name for a in f.func.arguments.out]
    if not outs or outs == returned:
        outputs: str | list[str] = _add_outputs(returned)
    else:
        outputs = _select(
            "force_outplace", "\n".join(_add_outputs(outs)), "\n".join(_add_outputs(returned))
        )
    return _POST_RECORD.substitute(add_trace_outputs=outputs)


def _redispatch(f: NativeFunction, sigs: FunctionSignatures) -> str:
    args = ", ".join([_BELOW_TRACER, *(b.name for b in sigs.dispatcher.bindings)])
    call = f"at::_ops::{f.func.name.unambiguous_name()}::redispatch({args});"
    # Inplace and out= functions return their arguments, so they keep no result.
    # (Upstream's template strips the space after `=`.)
    if f.func.kind in (SchemaKind.functional, SchemaKind.mutable) and f.func.returns:
        return f"{tie_return_values(f)} ={call}"
    return call


def trace_kernel(f: NativeFunction, sigs: FunctionSignatures) -> str:
    """The kernel's definition: dispatcher-convention parameters after the key set."""
    assert cpp.name(f.func) not in MANUAL_TRACER, f"{f.func.name} has a hand-written kernel"
    dispatcher = sigs.dispatcher
    if should_trace(f):
        body = [pre_record_trace(f), _redispatch(f, sigs), post_record_trace(f)]
    else:
        body = ["", _redispatch(f, sigs), ""]
    if f.func.returns:
        body.append(f"return {get_return_value(f)};")
    formals = wrapper_formals(dispatcher)
    return method_definition(dispatcher.returns_text, type_wrapper_name(f), formals, body)


def emit_trace_type(run: AutogradRun) -> Emitted:
    """`TraceType_0.cpp` ... `TraceType_9.cpp` (`_4` before torch 2.13) and
    `TraceTypeEverything.cpp`."""

    def env(f: NativeFunction) -> dict[str, list[str]]:
        return {
            "ops_headers": [f"#include <ATen/ops/{f.root_name}_ops.h>"],
            "trace_method_definitions": [trace_kernel(f, run.signatures.of(f))],
            "trace_wrapper_registrations": [
                wrapper_registration(f, type_wrapper_name(f), "TraceType")
            ],
        }

    out = run.output_set()
    out.add_sharded(
        "TraceType.cpp",
        [f for f in run.spec.functions if cpp.name(f.func) not in MANUAL_TRACER],
        key=_root_name,
        env=env,
        num_shards=autograd_shards(run.release),
        sharded_keys=("ops_headers", "trace_method_definitions", "trace_wrapper_registrations"),
        base_env={"generated_comment": f"@generated from {run.template_comment_dir}/TraceType.cpp"},
        weight=1,  # the second largest family, after VariableType's
    )
    return emitted(out)


def _root_name(f: NativeFunction) -> str:
    return f.root_name
