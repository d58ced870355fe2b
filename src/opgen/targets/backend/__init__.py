"""`opgen backend`: an out-of-tree backend's registration code, as torchgen's gen_backend_stubs.

The backend YAML is read into `opgen.spec.external_backend.ExternalBackend`;
`files` makes the texts of the kernel class header and the registrations, and holds
the model (BackendModel) and the emitters of both files (shared with `opgen lazy`),
`kernel_check` checks a C++ file for the listed kernels, `options` holds the flags
(BackendOptions), `generate` is the run (`read(options)`, `emit(model, options)`, and
`in_parts`, which reads the spec in parts in parallel and works on each, shared with
`opgen lazy`), and `command` is the command line and its `TARGET`.
"""
