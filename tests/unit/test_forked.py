"""opgen.forked: tasks spread over forked workers, results in task order."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import pytest

from opgen.forked import (
    MAX_TASKS,
    ForkedFailure,
    _ChildFailed,
    _decoded,
    _encoded,
    _sendable,
    run_forked,
)
from opgen.spec.keys import DispatchKey
from opgen.spec.schema import OperatorName

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def slow(value: int) -> Callable[[], int]:
    """A task long enough that every worker gets some of the queue."""

    def task() -> int:
        time.sleep(0.01)
        return value * value

    return task


def failing(message: str) -> Callable[[], int]:
    def task() -> int:
        time.sleep(0.01)
        raise ValueError(message)

    return task


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_results_come_back_in_task_order(workers: int) -> None:
    assert run_forked([slow(i) for i in range(20)], workers) == [i * i for i in range(20)]


def test_the_work_is_shared_between_processes() -> None:
    pids = run_forked([lambda: (time.sleep(0.01), os.getpid())[1] for _ in range(40)], 2)
    assert os.getpid() in pids
    assert len(set(pids)) == 2


def test_no_tasks_and_more_workers_than_tasks() -> None:
    assert run_forked([], 4) == []
    assert run_forked([slow(3)], 4) == [9]


@pytest.mark.parametrize("workers", [1, 2])
def test_the_lowest_failing_task_is_raised_with_the_others_results(workers: int) -> None:
    tasks = [slow(0), failing("first"), slow(2), slow(3), failing("second"), slow(5)]
    with pytest.raises(ForkedFailure) as caught:
        run_forked(tasks, workers)
    error = caught.value.error
    assert isinstance(error, ValueError) and str(error) == "first"
    # A process stops taking tasks after a failure; whatever succeeded is reported.
    assert set(caught.value.results.values()) <= {0, 4, 9, 25}
    assert all(caught.value.results[i] == i * i for i in caught.value.results)


def test_a_worker_that_dies_fails_the_run() -> None:
    parent = os.getpid()

    def task() -> int:
        time.sleep(0.01)
        if os.getpid() != parent:
            os._exit(3)
        return 1

    with pytest.raises(ForkedFailure) as caught:
        run_forked([task for _ in range(40)], 2)
    assert isinstance(caught.value.error, _ChildFailed)
    assert str(caught.value.error) == "a forked worker died (exit status 3)"


def test_an_exception_that_cannot_be_pickled_is_sent_as_its_traceback() -> None:
    class Local(Exception):  # a local class cannot be pickled
        pass

    try:
        raise Local("no pickle")
    except Local as error:
        sent = _sendable(error)
    assert isinstance(sent, _ChildFailed)
    assert str(sent).startswith("in a forked worker:\nTraceback (most recent call last):")
    assert "Local: no pickle" in str(sent)
    picklable = ValueError("fine")
    assert _sendable(picklable) is picklable


def test_too_many_tasks_are_refused() -> None:
    with pytest.raises(ValueError, match=f"at most {MAX_TASKS} tasks"):
        run_forked([slow(0)] * (MAX_TASKS + 1), 2)


def test_plain_results_travel_by_marshal_and_others_pickled() -> None:
    plain = {0: {"CPU": (frozenset({"a"}), (("", 3), "text", "more"))}, 1: ["x", 2, None]}
    assert _encoded(plain, {})[:1] == b"m"
    assert _decoded(_encoded(plain, {})) == (plain, {})
    # Objects (and subclasses of plain types, such as enumerations) keep their types.
    rich = {0: OperatorName.parse("add.Tensor"), 1: [DispatchKey.CPU]}
    assert _encoded(rich, {})[:1] == b"p"
    results: dict[int, object]
    results, failures = _decoded(_encoded(rich, {}))
    assert results == rich and failures == {}
    assert [type(key) for key in results[1]] == [DispatchKey]  # type: ignore[attr-defined]
    # A failure goes with the results, pickled.
    results, failures = _decoded(_encoded(plain, {2: ValueError("bad")}))
    assert results == plain and str(failures[2]) == "bad"


@pytest.mark.parametrize("value", [("a", 1), OperatorName.parse("mul.out")])
def test_results_of_either_kind_come_back_from_workers(value: object) -> None:
    def task() -> tuple[int, object]:
        time.sleep(0.01)
        return os.getpid(), value

    results = run_forked([task for _ in range(40)], 2)
    pids = {pid for pid, _ in results}
    assert os.getpid() in pids and len(pids) == 2  # some came back from the worker
    assert all(v == value for _, v in results)
