"""`opgen diff`: what changed between two specs, and whom it breaks.

`findings` matches the operators of two specs and lists every change, each
with its category (backward-incompatible, forward-incompatible, informational),
a rule name and its locations in both files; schema changes are judged by
`opgen.spec.compat`, which agrees with PyTorch's own checks; `mlx_findings` does
the same for two MLX extension specs (`--mlx`). `allowlist` reads
the `--allow` file (known breaks, each with a reason and an expiry date),
`report` prints text (every break, then a few examples of each informational
kind, or all with `--all`) or JSON Lines (every finding), and `command` is
the command line.
"""
