"""`opgen coverage`: how much of one operator set another implements.

`sources` reads an operator set from a spec (PyTorch's, a library's or an MLX
extension's), a backend YAML, a list of names or a lowering spec (with what it
leaves out, and why); `measure` counts, group
by group (all, each `--tier`, each tag of the reference), what is implemented
and what is missing; `report` prints text (the table and a few missing
operators per group, or all with `--all`), Markdown or JSON (every missing
operator); `command` is the command line.
"""
