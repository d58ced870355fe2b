"""Run independent tasks on several cores, in forks that inherit what is already built.

Rendering is pure Python work over a model that took a while to build; threads
would share the interpreter lock, and fresh processes would rebuild the model.
A fork inherits it for free (copy-on-write), so `run_forked` forks `workers - 1`
children after the model is built and lets every process, this one included,
take tasks from one shared queue until it is empty. The queue is a pipe holding
task numbers; a read takes one number whole, so each task runs exactly once,
and a process that finishes early takes more. Children send their results back
when their queue runs dry (by `marshal`, which needs no import, if they are
plain values such as strings, numbers and tuples; else pickled), then leave
with `os._exit` (no cleanup handlers, no flushing of buffers inherited from
the parent).

Results come back in task order, whichever process ran each task, so callers
stay deterministic. A task that raises stops its process taking more; the
failure with the lowest task number is raised once every process is done,
and the successful results come with it (`ForkedFailure.results`) so that the
caller can undo their effects.

Where `os.fork` does not exist, or with one worker, the tasks run here in order.
"""

from __future__ import annotations

import marshal
import os
import sys
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

R = TypeVar("R")

_INDEX_SIZE = 4  # bytes of a task number in the queue, little-endian
# The first byte of what a child sends back: how the rest is encoded.
_MARSHALLED, _PICKLED = b"m", b"p"
# A pipe buffers at least 4 KiB everywhere (64 KiB on Linux); the whole queue is
# written before the first fork, so it must fit.
MAX_TASKS = 1024


class ForkedFailure(Exception, Generic[R]):
    """A task failed: `error` is what it raised, `results` the tasks that succeeded."""

    def __init__(self, error: BaseException, results: dict[int, R]) -> None:
        super().__init__(str(error))
        self.error = error
        self.results = results


class _ChildFailed(Exception):
    """An exception a child could not send as it was (not picklable)."""


def can_fork() -> bool:
    return hasattr(os, "fork")


def run_forked(tasks: Sequence[Callable[[], R]], workers: int) -> list[R]:
    """Each task's result, in task order; tasks run spread over `workers` processes.

    Raises `ForkedFailure` if a task raises (or a child dies). At most
    `MAX_TASKS` tasks: group small ones.
    """
    if len(tasks) > MAX_TASKS:
        raise ValueError(f"run_forked takes at most {MAX_TASKS} tasks, not {len(tasks)}")
    workers = min(workers, len(tasks))
    if workers <= 1 or not can_fork():
        return _in_order(tasks)
    queue_read, queue_write = os.pipe()
    os.write(queue_write, b"".join(i.to_bytes(_INDEX_SIZE, "little") for i in range(len(tasks))))
    os.close(queue_write)  # readers see the end of the queue once it is empty
    children: list[tuple[int, int]] = []  # (pid, read end of its result pipe)
    try:
        for _ in range(workers - 1):
            children.append(_fork_child(tasks, queue_read, children))
        results, failures = _take_tasks(tasks, queue_read)
        child_results: dict[int, R]
        while children:
            child_results, child_failures = _collect(*children.pop())
            results.update(child_results)
            failures.update(child_failures)
    finally:
        os.close(queue_read)
        for pid, result_read in children:  # only if this process was interrupted
            os.close(result_read)
            os.waitpid(pid, 0)
    if failures:
        raise ForkedFailure(failures[min(failures)], results)
    return [results[i] for i in range(len(tasks))]


def _in_order(tasks: Sequence[Callable[[], R]]) -> list[R]:
    results: dict[int, R] = {}
    for i, task in enumerate(tasks):
        try:
            results[i] = task()
        except Exception as error:
            raise ForkedFailure(error, results) from error
    return list(results.values())


def _fork_child(
    tasks: Sequence[Callable[[], R]], queue_read: int, siblings: list[tuple[int, int]]
) -> tuple[int, int]:
    result_read, result_write = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        os.close(result_write)
        return pid, result_read
    status = 1
    try:  # the child: never returns
        os.close(result_read)
        for _, sibling_read in siblings:
            os.close(sibling_read)
        results, failures = _take_tasks(tasks, queue_read)
        with os.fdopen(result_write, "wb") as out:
            out.write(_encoded(results, failures))
        status = 0
    finally:
        os._exit(status)


def _take_tasks(
    tasks: Sequence[Callable[[], R]], queue_read: int
) -> tuple[dict[int, R], dict[int, BaseException]]:
    results: dict[int, R] = {}
    while data := os.read(queue_read, _INDEX_SIZE):
        index = int.from_bytes(data, "little")
        try:
            results[index] = tasks[index]()
        except Exception as error:
            return results, {index: error}
    return results, {}


def _encoded(results: dict[int, R], failures: dict[int, BaseException]) -> bytes:
    """What a child sends back: its results, as `marshal` writes them if they are plain
    values (str, int, tuple, list, dict, set, ...), which needs no import; else pickled."""
    if not failures:
        try:
            return _MARSHALLED + marshal.dumps(results)
        except ValueError:  # not plain values
            pass
    import pickle  # only where results are not plain values

    sendable = {i: _sendable(e) for i, e in failures.items()}
    return _PICKLED + pickle.dumps((results, sendable), pickle.HIGHEST_PROTOCOL)


def _decoded(data: bytes) -> tuple[dict[int, R], dict[int, BaseException]]:
    if data[:1] == _MARSHALLED:
        return marshal.loads(data[1:]), {}
    import pickle

    results, failures = pickle.loads(data[1:])
    return results, failures


def _sendable(error: BaseException) -> BaseException:
    import pickle

    try:
        pickle.dumps(error)
        return error
    except Exception:
        import traceback  # only for a failure that cannot travel as it is

        text = "".join(traceback.format_exception(error))
        return _ChildFailed(f"in a forked worker:\n{text}")


def _collect(pid: int, result_read: int) -> tuple[dict[int, R], dict[int, BaseException]]:
    with os.fdopen(result_read, "rb") as source:
        data = source.read()
    _, status = os.waitpid(pid, 0)
    if status == 0 and data:
        return _decoded(data)
    # The child died before sending anything (killed, out of memory): the tasks it
    # had taken are lost, so the run fails as a whole.
    return {}, {-1: _ChildFailed(f"a forked worker died ({_describe(status)})")}


def _describe(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"signal {os.WTERMSIG(status)}"
    return f"exit status {os.waitstatus_to_exitcode(status)}"
