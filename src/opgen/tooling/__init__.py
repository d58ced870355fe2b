"""Tools over specs that generate no code: `opgen check`, `dump`, `diff` and `coverage`.

They sit where targets sit (they use `spec/` and never a target's internals; `check
--library` reads a library as `opgen torch-library` does, through its public loader).
Each reads PyTorch's spec language, or with `--library` or `--mlx` a custom-op
library's or an MLX extension's:

check            loads and validates a spec, and the files read against it
dump             the model as JSON Lines, field for field torchgen's
dump_extensions  the records of a library's and an MLX spec's operators
spec_files       the spec a tool reads: NATIVE_YAML and --tags, or the bundled example
dialects         --library and --mlx, and reading a spec as the dialect they name
recognition      telling a spec read by another dialect's rules, with the flag it needs
diff             compares two specs operator by operator and judges every schema change
                 by PyTorch's compatibility rules (`opgen.spec.compat`)
coverage         how much of one operator set another implements, by tag and by tier
"""
