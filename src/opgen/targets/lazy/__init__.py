"""`opgen lazy`: a lazy-tensor backend's code, as torchgen's gen_lazy_tensor.

It writes what `opgen backend` writes (`opgen.targets.backend.files`), with
registrations in a function the backend calls, plus the IR: `plan` plans every
operator's node and kernel whole, `nodes` (and `ts_lowering`) render the node
classes, `kernels` the generated kernels and their shape-inference declarations,
`files` holds the model and its emitters, `checks` checks the YAML's lazy parts and
the shape-inference header, `options` holds run_gen_lazy_tensor's arguments
(LazyOptions, and what nodes and kernels read of them: NodeStyle, KernelStyle) and the
flags (LazyBackendOptions), `generate` is the run (`read(options)`, `emit(model,
options)`), `command` is the command line and its `TARGET`. The calling convention is
`opgen.api.lazy`.
"""
