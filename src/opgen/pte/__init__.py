"""Reading ExecuTorch programs (`.pte` files): the operators a model calls, and how.

A `.pte` is a flatbuffer of ExecuTorch's program schema (`schema/program.fbs`), read with
the `flatbuffers` runtime through small typed accessors, as flatc's Python would read it,
with every offset checked, since the file comes from disk. Only the command that reads
models (`opgen executorch-oplist --model_file_path`) imports this package.

flatbuffer   bounds-checked tables, vectors, strings and unions over the runtime; `PteError`
schema       the tables and fields of program.fbs that opgen reads, one accessor each
header       where the flatbuffer is in the file: identifier, extended header, segments,
             bundled programs
program      `read_program(path)`: the operators, and the argument dtypes and dim orders of
             each kernel call (`ProgramOperators`), as ExecuTorch's selective build reads them
"""
