"""`opgen backend`: an out-of-tree backend's registration code, as torchgen's gen_backend_stubs.

The backend YAML is read into `opgen.spec.external_backend.ExternalBackend`;
`files` renders the kernel class header and the registrations (shared with
`opgen lazy`), `kernel_check` checks a C++ file for the listed kernels,
`options` holds the flags (BackendOptions), `generate` reads the inputs and fills the
output set (`generate(options)`, and `in_parts`, which reads the spec in parts in
parallel and works on each, shared with `opgen lazy`), and `command` is the command
line and its `TARGET`.
"""
