"""Which operator calls a JIT trace records.

The Tracer kernels (TraceType) record a call as a graph node when the
operator returns a tensor and takes no `Storage`; composites in
`DONT_RECORD_TRACE` are not recorded themselves, their parts are. The Python
bindings tell `PythonArgParser` whether every overload of a name is
recorded (`traceable`). Facts from torchgen/packaged/autograd/gen_trace_type.py.
"""

from __future__ import annotations

from opgen.spec.native import NativeFunction

# Composites recorded as their parts (by base name).
DONT_RECORD_TRACE = frozenset(
    {
        # Convolutions, by dimension.
        "conv1d",
        "conv_transpose1d",
        "conv2d",
        "conv_transpose2d",
        "conv3d",
        "conv_transpose3d",
        "convolution",
        # Recurrent cells.
        "gru_cell",
        "lstm_cell",
        "rnn_relu_cell",
        "rnn_tanh_cell",
        # The JIT has no sparse tensors.
        "_coalesced",
    }
)


def should_trace(f: NativeFunction) -> bool:
    """Whether the kernel records the call: it returns a tensor, takes no Storage."""
    if any(str(a.type) in ("Storage", "Type") for a in f.func.schema_order_arguments()):
        return False
    if not any(r.type.is_tensor_like() for r in f.func.returns):
        return False
    return f.func.name.name.base not in DONT_RECORD_TRACE
