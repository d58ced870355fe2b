"""Targets: each turns a spec into one family of generated files.

A target fills `opgen.output.OutputSet`s and never touches the file system;
the CLI hands the sets to `opgen.output.write_files`. `aten` is the drop-in for
`python -m torchgen.gen`.
"""
