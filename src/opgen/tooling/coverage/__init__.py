"""`opgen coverage`: how much of one operator set another implements.

`sources` reads an operator set from a spec, a backend YAML or a list of
names; `measure` counts, group by group (all, each `--tier`, each tag of the
reference), what is implemented and what is missing; `report` prints text
(the table and a few missing operators per group, or all with `--all`),
Markdown or JSON (every missing operator); `command` is the command line.
"""
