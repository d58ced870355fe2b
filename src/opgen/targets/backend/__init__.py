"""`opgen backend`: an out-of-tree backend's registration code, as torchgen's gen_backend_stubs.

The backend YAML is read into `opgen.spec.external_backend.ExternalBackend`;
`files` renders the kernel class header and the registrations (shared with
`opgen lazy`), `kernel_check` checks a C++ file for the listed kernels, and
`command` is the command line.
"""
