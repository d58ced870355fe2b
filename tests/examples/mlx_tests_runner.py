"""Runs one of MLX's own test files, with `mx` served by plain mlx.core or by a generated module.

    python mlx_tests_runner.py TESTS_DIR OUT.json [--module NAME] [--test-file test_ops]

With `--module`, the module NAME (importable from the current sys.path) serves
what it binds: each public function replaces mlx.core's function of that name in
the `mx` the tests import, each function of a submodule (`NAME.linalg.norm`)
mlx.core's in the submodule of that name (`mx.linalg.norm`), and the methods,
operators and properties of `NAME.array_methods()` are set on `mx.array` for the
run; everything else is mlx.core's. The outcome of each test (`pass`, `fail`,
`error`, `skip`) is written to OUT.json as a mapping from the test's id, with
what was served (`sum`, `linalg.norm`, `array.__add__`). Each test starts from
the same seeds (NumPy's and `mx.random`'s, as served), so that both runs give a
test the same inputs, and a test whose random inputs fail now and then fails or
passes in both alike. Run in a process of its own: it replaces `mlx.core` in
sys.modules and changes `mlx.core.array`.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import types
import unittest

# What a generated module has that mlx.core has not: how to install its methods.
OWN = frozenset({"array_methods"})


def public(module: types.ModuleType) -> list[str]:
    """The public functions of a module, sorted (not its classes: `ArrayAt`, which `a.at`
    gives)."""
    return sorted(
        n
        for n, v in vars(module).items()
        if not n.startswith("_") and n not in OWN and callable(v) and not isinstance(v, type)
    )


def _proxy(name: str, real: types.ModuleType) -> types.ModuleType:
    proxy = types.ModuleType(name, real.__doc__)
    proxy.__dict__.update({k: v for k, v in vars(real).items() if k not in ("__name__", "__doc__")})
    return proxy


def serve(module_name: str) -> list[str]:
    """Make `import mlx.core` give mlx.core with what the module binds; what it serves."""
    import mlx
    import mlx.core as real

    generated = importlib.import_module(module_name)
    served = public(generated)
    proxy = _proxy("mlx.core", real)
    for name in served:
        setattr(proxy, name, getattr(generated, name))
    for sub, module in sorted(vars(generated).items()):
        if not isinstance(module, types.ModuleType):
            continue
        sub_proxy = _proxy(f"mlx.core.{sub}", getattr(real, sub))
        for name in public(module):
            setattr(sub_proxy, name, getattr(module, name))
            served.append(f"{sub}.{name}")
        setattr(proxy, sub, sub_proxy)
    methods = getattr(generated, "array_methods", dict)()
    for name, method in sorted(methods.items()):
        setattr(real.array, name, method)
        served.append(f"array.{name}")
    sys.modules["mlx.core"] = proxy
    mlx.core = proxy  # type: ignore[attr-defined]
    return served


class _Outcomes(unittest.TextTestResult):
    outcomes: dict[str, str]

    def startTestRun(self) -> None:
        self.outcomes = {}
        super().startTestRun()

    def startTest(self, test: unittest.TestCase) -> None:
        import numpy

        numpy.random.seed(0)
        sys.modules["mlx.core"].random.seed(0)
        super().startTest(test)

    def addSuccess(self, test: unittest.TestCase) -> None:
        super().addSuccess(test)
        self.outcomes.setdefault(test.id(), "pass")

    def addFailure(self, test: unittest.TestCase, err: object) -> None:  # type: ignore[override]
        super().addFailure(test, err)  # type: ignore[arg-type]
        self.outcomes[test.id()] = "fail"

    def addError(self, test: unittest.TestCase, err: object) -> None:  # type: ignore[override]
        super().addError(test, err)  # type: ignore[arg-type]
        self.outcomes[test.id()] = "error"

    def addSkip(self, test: unittest.TestCase, reason: str) -> None:
        super().addSkip(test, reason)
        self.outcomes[test.id()] = "skip"

    def addSubTest(self, test: unittest.TestCase, subtest: unittest.TestCase, err: object) -> None:  # type: ignore[override]
        super().addSubTest(test, subtest, err)  # type: ignore[arg-type]
        if err is not None:
            self.outcomes[test.id()] = "fail"


def main() -> None:
    """Run the test file with `mx` served by the module, if any; write the outcomes."""
    parser = argparse.ArgumentParser()
    parser.add_argument("tests")
    parser.add_argument("out")
    parser.add_argument("--module")
    parser.add_argument("--test-file", default="test_ops", help="a test module of TESTS_DIR")
    args = parser.parse_args()
    served = serve(args.module) if args.module else []
    sys.path.insert(0, args.tests)
    suite = unittest.defaultTestLoader.loadTestsFromName(args.test_file)
    runner = unittest.TextTestRunner(resultclass=_Outcomes, verbosity=0, stream=sys.stderr)
    result = runner.run(suite)
    assert isinstance(result, _Outcomes)
    with open(args.out, "w") as f:
        json.dump({"served": served, "outcomes": result.outcomes}, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
