"""PyTorch's OpInfo database as the oracle of a generated ATen-on-MLX package.

For each OpInfo of `torch.testing._internal.common_methods_invocations.op_db` and each of
its sample inputs, in float32 and in int64, bool and bfloat16 where the OpInfo lists
them, the op runs eagerly on the CPU under a dispatch mode that records every ATen
operator it calls, with its arguments and results. Each recorded call of an operator the
package lowers is then run through the package's function, on the same arguments
converted to MLX, and compared with what eager torch returned: the same shape, torch's
dtype (int64 where torch gives int64), and the values at the OpInfo's tolerances: the
loosest tolerance any of the OpInfo's own tolerance overrides gives for the sample's
dtype (PyTorch's tests of that operator accept that much), else the tolerances
`torch.testing.assert_close` uses for the dtype. Operators whose results are random
(PyTorch's `nondeterministic_seeded` tag) or uninitialized (`empty*`) are compared by
shape and dtype only.

Each call counts for the operator it calls: passed, failed (a wrong result, or an error
that is not a refusal), or refused (a ValueError of the package that names the
operator: a value it says it cannot honour).

    python tests/examples/aten_mlx_opinfo.py PACKAGE_DIR [--ops NAME,...] [--json FILE]

prints the report (and writes it as JSON); the test suite reads `run_opinfo`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten, tree_map

DTYPES = (torch.float32, torch.int64, torch.bool, torch.bfloat16)
# Operators whose values are not determined by their arguments.
UNINITIALIZED = ("aten::empty", "aten::empty_like", "aten::empty_strided", "aten::new_empty")
# Operators that read a tensor's memory, not only its values: their expected result is
# torch's on contiguous copies of the arguments, whose memory is their values in
# row-major order, as an MLX array's is (a view's memory beyond its values, or in
# another order, never reaches MLX).
STORAGE_READERS = (
    "aten::as_strided",
    "aten::as_strided_",
    "aten::as_strided_copy",
    "aten::as_strided_scatter",
)


@dataclass
class Counts:
    passed: int = 0
    failed: int = 0
    refused: int = 0
    failures: list[str] = field(default_factory=list)  # the first few, for the report
    refusals: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "failed": self.failed,
            "refused": self.refused,
            "failures": self.failures,
            "refusals": self.refusals,
        }


@dataclass
class Call:
    key: str  # aten::add.Tensor
    overload: Any
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    result: Any


class _Recorder(TorchDispatchMode):
    """Records each ATen call whose operator `wanted` accepts, with copies of its
    arguments taken before the call (an in-place call changes them)."""

    def __init__(self, wanted: Callable[[str], bool]) -> None:
        super().__init__()
        self.wanted = wanted
        self.calls: list[Call] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        kwargs = kwargs or {}
        key = operator_key(func)
        copies = None
        if self.wanted(key):
            copies = tree_map(_copy, (args, kwargs))
        result = func(*args, **kwargs)
        if copies is not None and key in STORAGE_READERS:
            copies = tree_map(_contiguous, copies)
            try:
                expected = func(*tree_map(_copy, copies[0]), **tree_map(_copy, copies[1]))
            except RuntimeError:  # torch refuses the copies: nothing to compare
                return result
            self.calls.append(Call(key, func, copies[0], copies[1], tree_map(_copy, expected)))
        elif copies is not None:
            self.calls.append(Call(key, func, copies[0], copies[1], tree_map(_copy, result)))
        return result


def _copy(value: Any) -> Any:
    return value.detach().clone() if isinstance(value, torch.Tensor) else value


def _contiguous(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach().clone(memory_format=torch.contiguous_format)
    return value


def operator_key(overload: Any) -> str:
    schema = overload._schema
    return f"{schema.name}.{schema.overload_name}" if schema.overload_name else str(schema.name)


def to_torch(value: Any) -> Any:
    """An MLX result as torch values: arrays as tensors of the same dtype."""
    import mlx.core as mx

    if isinstance(value, mx.array):
        if value.dtype == mx.bfloat16:
            return torch.from_numpy(np.array(value.view(mx.int16))).view(torch.bfloat16)
        return torch.from_numpy(np.array(value))
    if isinstance(value, (list, tuple)):
        return type(value)(to_torch(v) for v in value)
    return value


def tolerance(op: Any, dtype: torch.dtype) -> dict[str, float]:
    """The loosest (atol, rtol) the OpInfo's tolerance overrides give `dtype`, for
    assert_close; empty (its defaults) if none does."""
    from torch.testing._internal.common_device_type import toleranceOverride

    found: dict[str, float] = {}
    for decorator in op.decorators:
        for inner in getattr(decorator, "decorators", [decorator]):
            if isinstance(inner, toleranceOverride) and dtype in inner.d:
                tol = inner.d[dtype]
                found["atol"] = max(found.get("atol", 0.0), tol.atol)
                found["rtol"] = max(found.get("rtol", 0.0), tol.rtol)
    return found


def compare(
    expected: Any, actual: Any, values: bool, tolerances: Mapping[str, float] | None = None
) -> str | None:
    """Why `actual` (torch values from MLX) is not `expected` at `tolerances` (atol, rtol;
    none: assert_close's defaults); None if it is."""
    flat_expected = tree_flatten(expected)[0]
    flat_actual = tree_flatten(actual)[0]
    if len(flat_expected) != len(flat_actual):
        return f"{len(flat_actual)} results, expected {len(flat_expected)}"
    for i, (e, a) in enumerate(zip(flat_expected, flat_actual, strict=True)):
        where = f"result {i}: " if len(flat_expected) > 1 else ""
        if isinstance(e, torch.Tensor):
            if not isinstance(a, torch.Tensor):
                return f"{where}{type(a).__name__}, expected a tensor"
            if tuple(a.shape) != tuple(e.shape):
                return f"{where}shape {tuple(a.shape)}, expected {tuple(e.shape)}"
            if a.dtype != e.dtype:
                return f"{where}dtype {a.dtype}, expected {e.dtype}"
            if values:
                try:
                    torch.testing.assert_close(a, e, equal_nan=True, **(tolerances or {}))
                except AssertionError as error:
                    return where + " ".join(str(error).split())[:300]
        elif isinstance(e, (int, float, bool)) and values:
            both_nan = e != e and a != a
            if isinstance(a, torch.Tensor) or (a != e and not both_nan):
                return f"{where}{a!r}, expected {e!r}"
    return None


def run_call(
    call: Call,
    operators: Mapping[str, Callable[..., Any]],
    to_mlx: Callable[..., Any],
    tolerances: Mapping[str, float] | None = None,
) -> tuple[str, str]:
    """('passed' | 'failed' | 'refused', detail)."""
    function = operators[call.key]
    random = torch.Tag.nondeterministic_seeded in call.overload.tags
    values = not random and not call.key.startswith(UNINITIALIZED)
    try:
        args = to_mlx(call.args)
        kwargs = {k: to_mlx(v) for k, v in call.kwargs.items()}
    except TypeError as error:  # a value MLX has no type for (complex128): the package refuses it
        return "refused", f"{call.key}: {error}"
    try:
        result = function(*args, **kwargs)
        import mlx.core as mx

        mx.eval([r for r in tree_flatten(result)[0] if isinstance(r, mx.array)])
    except ValueError as error:
        message = str(error)
        if message.startswith(f"{call.key}:"):
            return "refused", message
        return "failed", f"ValueError: {message}"
    except Exception as error:  # any other error is a failure of the lowering
        return "failed", f"{type(error).__name__}: {' '.join(str(error).split())[:300]}"
    problem = compare(call.result, to_torch(result), values, tolerances)
    return ("passed", "") if problem is None else ("failed", problem)


def describe(call: Call) -> str:
    def short(value: Any) -> Any:
        if isinstance(value, torch.Tensor):
            return f"Tensor{list(value.shape)}:{str(value.dtype).removeprefix('torch.')}"
        return value

    args = tree_map(short, call.args)
    kwargs = tree_map(short, call.kwargs)
    return f"{call.key}{args}{kwargs if kwargs else ''}"


def samples(op: Any, dtype: torch.dtype) -> Iterator[Any]:
    try:
        yield from op.sample_inputs("cpu", dtype, requires_grad=False)
    except Exception:  # an OpInfo whose samples cannot be made for this dtype
        return


Position = tuple[int, int, int]  # (OpInfo index in op_db, dtype index, sample index)


def worker(
    operators: Mapping[str, Callable[..., Any]],
    to_mlx: Callable[..., Any],
    chosen: set[str],
    dtypes: tuple[torch.dtype, ...],
    begin: Position,
    end: int,
    emit: Callable[[dict[str, Any]], None],
) -> None:
    """Runs op_db[begin[0]:end] from `begin`, emitting a line before each sample's calls
    (`at`, the operators it calls) and one per call (`key`, `dtype`, `outcome`,
    `detail`): a caller that sees the process die knows which sample killed it."""
    from torch.testing._internal.common_methods_invocations import op_db

    for op_index in range(begin[0], min(end, len(op_db))):
        op = op_db[op_index]
        for dtype_index, dtype in enumerate(dtypes):
            if (op_index, dtype_index) < begin[:2] or dtype not in op.dtypes:
                continue
            for index, sample in enumerate(samples(op, dtype)):
                if (op_index, dtype_index, index) < begin:
                    continue
                recorder = _Recorder(lambda key: key in chosen and key in operators)
                try:
                    with recorder:
                        op(sample.input, *sample.args, **sample.kwargs)
                except Exception:  # a sample eager torch refuses: nothing to compare
                    continue
                if index == 0 and not recorder.calls:
                    break  # an OpInfo whose first sample calls nothing lowered: skipped
                dtype_name = str(dtype).removeprefix("torch.")
                emit(
                    {
                        "at": [op_index, dtype_index, index],
                        "op": op.name,
                        "dtype": dtype_name,
                        "calls": [describe(call) for call in recorder.calls],
                        "keys": [call.key for call in recorder.calls],
                    }
                )
                for call in recorder.calls:
                    outcome, detail = run_call(call, operators, to_mlx, tolerance(op, dtype))
                    emit(
                        {
                            "key": call.key,
                            "dtype": dtype_name,
                            "outcome": outcome,
                            "detail": f"{op.name}: {describe(call)}: {detail}" if detail else "",
                        }
                    )


def run_opinfo(
    package_dir: str,
    package: str = "aten_mlx",
    *,
    only: Iterable[str] | None = None,
    dtypes: Iterable[torch.dtype] = DTYPES,
    workers: int = 2,
    log: Callable[[str], None] | None = None,
) -> dict[str, dict[str, Counts]]:
    """Per lowered operator and dtype name, the counts of its recorded calls: op_db run in
    `workers` processes, each restarted after the sample that killed it (a crash of
    MLX), which counts as failed for each call of that sample."""
    import subprocess
    from concurrent.futures import ThreadPoolExecutor

    from torch.testing._internal.common_methods_invocations import op_db

    dtype_names = [str(d).removeprefix("torch.") for d in dtypes]
    size = -(-len(op_db) // workers)
    ranges = [(i * size, min((i + 1) * size, len(op_db))) for i in range(workers)]
    report: dict[str, dict[str, Counts]] = {}
    lines: list[dict[str, Any]] = []

    def run_range(first: int, end: int) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        begin: Position = (first, 0, 0)
        while True:
            command = [
                sys.executable, __file__, package_dir, "--package", package, "--worker",
                f"--begin={begin[0]}:{begin[1]}:{begin[2]}", f"--end={end}",
                f"--dtypes={','.join(dtype_names)}",
            ]  # fmt: skip
            if only is not None:
                command.append(f"--ops={','.join(only)}")
            done = subprocess.run(command, capture_output=True, text=True)
            output = done.stdout.splitlines()
            records = [json.loads(line) for line in output if line.startswith("{")]
            found += records
            if done.returncode == 0:
                return found
            last = next((r for r in reversed(records) if "at" in r), None)
            if last is None:
                raise RuntimeError(f"an OpInfo worker failed: {done.stderr[-2000:]}")
            reported = sum(1 for r in records[records.index(last) + 1 :] if "key" in r)
            crash = f"the process died ({done.returncode}): {done.stderr.strip()[-200:]}"
            for key, call in zip(last["keys"][reported:], last["calls"][reported:], strict=True):
                found.append(
                    {"key": key, "dtype": last["dtype"], "outcome": "failed",
                     "detail": f"{last['op']}: {call}: {crash}"}
                )  # fmt: skip
            if log is not None:
                log(f"restarting after {last['op']} {last['dtype']} sample {last['at'][2]}")
            begin = (last["at"][0], last["at"][1], last["at"][2] + 1)

    with ThreadPoolExecutor(workers) as pool:
        for found in pool.map(lambda r: run_range(*r), ranges):
            lines += found
    for record in lines:
        if "key" not in record:
            continue
        counts = report.setdefault(record["key"], {}).setdefault(record["dtype"], Counts())
        outcome = record["outcome"]
        setattr(counts, outcome, getattr(counts, outcome) + 1)
        if outcome == "failed" and len(counts.failures) < 5:
            counts.failures.append(record["detail"])
        if outcome == "refused" and len(counts.refusals) < 3:
            counts.refusals.append(record["detail"])
    return report


def report_text(report: Mapping[str, Mapping[str, Counts]]) -> str:
    lines = []
    for key in sorted(report):
        parts = []
        for dtype, counts in sorted(report[key].items()):
            parts.append(f"{dtype} {counts.passed}/{counts.failed}/{counts.refused}")
        lines.append(f"{key}: " + ", ".join(parts))
        for dtype_counts in report[key].values():
            lines += [f"    FAIL {f}" for f in dtype_counts.failures]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("package_dir", help="the directory holding the generated package")
    parser.add_argument("--package", default="aten_mlx")
    parser.add_argument("--ops", help="only these operators, comma-separated (aten::add.Tensor)")
    parser.add_argument("--dtypes", help="only these dtypes, comma-separated (float32)")
    parser.add_argument("--json", help="write the report as JSON here")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--begin", default="0:0:0", help=argparse.SUPPRESS)
    parser.add_argument("--end", type=int, default=1 << 30, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    only = args.ops.split(",") if args.ops else None
    dtypes = tuple(getattr(torch, d) for d in args.dtypes.split(",")) if args.dtypes else DTYPES
    if args.worker:
        sys.path.insert(0, args.package_dir)
        package = __import__(args.package)
        chosen = set(only) if only is not None else set(package.OPERATORS)
        first, dtype, sample = (int(p) for p in args.begin.split(":"))

        def emit(record: dict[str, Any]) -> None:
            print(json.dumps(record), flush=True)

        begin = (first, dtype, sample)
        worker(package.OPERATORS, package.to_mlx, chosen, dtypes, begin, args.end, emit)
        return 0
    log = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    report = run_opinfo(
        args.package_dir, args.package, only=only, dtypes=dtypes, workers=args.workers, log=log
    )
    print(report_text(report))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {k: {d: c.as_json() for d, c in v.items()} for k, v in report.items()}, f, indent=1
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
