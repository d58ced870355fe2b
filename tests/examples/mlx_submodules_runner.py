"""Runs one of MLX's test files with `mx` served by a generated module, submodules too.

    python mlx_submodules_runner.py TESTS_DIR OUT.json --module NAME --test-file test_linalg

As `mlx_ops_runner.py` (whose outcomes it records the same way), and besides each
public function of the module NAME, each function of each of its submodules
(`NAME.linalg.norm`) replaces mlx.core's of that name in the submodule of that name
(`mx.linalg.norm`); everything else is mlx.core's. OUT.json says what was served, the
submodules' functions as `linalg.norm`.
"""

from __future__ import annotations

import importlib
import sys
import types

from mlx_ops_runner import main


def _public(module: types.ModuleType) -> list[str]:
    return sorted(n for n in vars(module) if not n.startswith("_") and callable(getattr(module, n)))


def _proxy(name: str, real: types.ModuleType) -> types.ModuleType:
    proxy = types.ModuleType(name, real.__doc__)
    proxy.__dict__.update({k: v for k, v in vars(real).items() if k not in ("__name__", "__doc__")})
    return proxy


def serve(module_name: str) -> list[str]:
    """Make `import mlx.core` give mlx.core with the module's functions; their names."""
    import mlx
    import mlx.core as real

    generated = importlib.import_module(module_name)
    served = _public(generated)
    proxy = _proxy("mlx.core", real)
    for name in served:
        setattr(proxy, name, getattr(generated, name))
    for sub, module in sorted(vars(generated).items()):
        if not isinstance(module, types.ModuleType):
            continue
        sub_proxy = _proxy(f"mlx.core.{sub}", getattr(real, sub))
        for name in _public(module):
            setattr(sub_proxy, name, getattr(module, name))
            served.append(f"{sub}.{name}")
        setattr(proxy, sub, sub_proxy)
    sys.modules["mlx.core"] = proxy
    mlx.core = proxy  # type: ignore[attr-defined]
    return served


if __name__ == "__main__":
    main(serve)
