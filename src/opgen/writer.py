"""The one place that writes generated files: atomically, and only what changed.

`write_files` writes every `OutputSet` of a run: atomically (a temporary file
beside the target, then `os.replace`), only when the bytes differ from what is on
disk (so build systems see unchanged mtimes). A directory that does not exist yet
is built whole under a temporary name, its files at their final names, and renamed
into place. Every file is rendered (into a temporary file or directory) before the
first one is renamed into place, so a failing target leaves the outputs as they
were. With `jobs` > 1 the rendering is spread over forked workers (`opgen.forked`).
`write_if_changed` writes one file so, such as a dependency list.

Several runs may write into one tree at once, each its own files or the same
bytes (Ninja starts `opgen aten --generate headers` and `--generate sources`
together on a clean build); the tree ends as the runs would leave it one after
another. When a run moves a new directory into place and finds that another run
got there first, it merges its files in instead (`_move_directory`).
Temporary names carry the pid of the run that owns them, the process that
renames them into place: `.{name}.{owner}-{worker}-{count}.tmp` for files,
`.{name}.{owner}-{count}.tmp` for directories. A run first removes, wherever it
will write, those whose owner is no longer alive (`_remove_stale`): a run killed
half-way leaves no trace once the next one is done.

Deliberate differences from torchgen's FileManager: writes are atomic; "unchanged"
compares bytes (torchgen compares text read with universal newlines); files always
get LF line ends.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import itertools
import os
import re
import stat
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from opgen.frozen import frozen
from opgen.output import OutputEntry, OutputError, OutputSet, path_order

if TYPE_CHECKING:
    from pathlib import Path


@frozen
class WriteReport:
    # Kept as strings: most callers never look, and thousands of Paths take a while to build.
    written: tuple[str, ...]  # every file the sets produce, sorted as paths (dry run too)
    replaced: tuple[str, ...]  # files whose content changed, so were written

    @property
    def files(self) -> tuple[Path, ...]:
        from pathlib import Path

        return tuple(map(Path, self.written))

    @property
    def changed(self) -> tuple[Path, ...]:
        from pathlib import Path

        return tuple(map(Path, self.replaced))


def write_files(
    sets: Iterable[OutputSet], *, dry_run: bool = False, make_roots: bool = False, jobs: int = 1
) -> WriteReport:
    """Write every set's files under its root; a dry run renders and writes nothing.

    Files are rendered one at a time, and each changed one goes to a temporary
    file beside its target; only when all are rendered are the temporary files
    renamed into place. So a failing render leaves the outputs as they were,
    and each process holds at most one file's text in memory. A directory that
    does not exist yet is built whole under a temporary name and renamed into
    place with the files (`_NewTrees`), so its files need no renames of their own.

    With `jobs` > 1 the rendering is spread over that many processes
    (`opgen.forked`); a family of files sharing lazily built state stays in
    one process. The renames happen here, in sorted order, either way.

    `make_roots` creates each root even when it stays empty or the run is dry,
    as gen.py does for its install dirs.
    """
    sets = list(sets)
    # Paths are plain strings from here on: a run writes thousands of files, and
    # pathlib's parsing, hashing and comparing cost more than the writes themselves.
    targets: dict[str, OutputEntry] = {}
    layout: dict[str, set[str]] = {}  # each root -> the directories written under it
    for output_set in sets:
        root = os.path.normpath(output_set.root)
        directories = layout.setdefault(root, set())
        if make_roots:
            directories.add(root)
        for rel, entry in output_set.entries():
            file = os.path.join(root, rel)
            if file in targets:
                raise OutputError(f"{file} is written by two output sets")
            targets[file] = entry
            directories.add(os.path.dirname(file))
    files = sorted(targets, key=path_order)
    if dry_run:
        if make_roots:
            for root in layout:
                os.makedirs(root, exist_ok=True)
        return WriteReport(tuple(files), ())
    owner = os.getpid()  # the process that renames; workers name their files after it too
    _remove_stale(_leftover_places(layout), owner)
    trees = _NewTrees.make(itertools.chain.from_iterable(layout.values()), owner)
    try:
        if jobs <= 1:  # in this process, in the units' order; _stage_files cleans up on failure
            order = [file for unit in _units(files, targets, len(files) + 1) for file in unit]
            staged = _stage_files(order, targets, trees, owner)
        else:
            staged = _stage_in_parallel(files, targets, jobs, trees, owner)
        staged.sort(key=lambda pair: path_order(pair[1]))
        try:
            for temp, file in staged:
                os.replace(temp, file)
            trees.move_into_place()
        except BaseException:
            _discard(staged)
            raise
    except BaseException:
        trees.discard()
        raise
    replaced = {file for _, file in staged}
    changed = tuple(file for file in files if file in replaced or trees.holds(file))
    return WriteReport(tuple(files), changed)


def _remove(file: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(file)


def _stage_in_parallel(
    files: Sequence[str],
    targets: Mapping[str, OutputEntry],
    jobs: int,
    trees: _NewTrees,
    owner: int,
) -> list[tuple[str, str]]:
    from opgen.forked import MAX_TASKS, ForkedFailure, run_forked

    units = _units(files, targets, MAX_TASKS)
    tasks = [functools.partial(_stage_files, unit, targets, trees, owner) for unit in units]
    try:
        return [pair for unit in run_forked(tasks, jobs) for pair in unit]
    except ForkedFailure as failure:
        for unit in failure.results.values():
            _discard(unit)
        raise failure.error from None


def _units(
    files: Sequence[str], targets: Mapping[str, OutputEntry], max_units: int
) -> list[list[str]]:
    """`files` in groups rendered together, at most `max_units` of them.

    A family's files form one group, and families come first, the heaviest
    (their `weight`) first, else in path order: they are the largest pieces of
    work, and a queue runs best when the large pieces go first. Other files are
    grouped in runs of consecutive files.
    """
    families: dict[int, list[str]] = {}
    weights: dict[int, int] = {}
    singles: list[str] = []
    for file in files:
        entry = targets[file]
        if entry.family is None:
            singles.append(file)
        else:
            families.setdefault(id(entry.family), []).append(file)
            weights[id(entry.family)] = max(weights.get(id(entry.family), 0), entry.weight)
    heaviest_first = sorted(families, key=lambda family: -weights[family])  # a stable sort
    room = max(max_units - len(families), 1)
    run = max(-(-len(singles) // room), 1)  # ceiling division; 1 if there are none
    return [
        *(families[family] for family in heaviest_first),
        *(singles[i : i + run] for i in range(0, len(singles), run)),
    ]


# os.open applies the umask, so a new file gets the mode a plain write would give it.
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)


class _NewTrees:
    """The directories a run creates, each built under a temporary name.

    A directory that does not exist yet holds no earlier outputs, so its files
    are written straight to their final names, without reading what is on disk
    or renaming each one; the directory itself is renamed into place at the
    end. A clean build writes every file this way, thousands of renames fewer,
    and a killed run leaves only a hidden temporary directory, never a
    half-written file under an output's name; the next run removes it
    (`_remove_stale`: it is named `.{name}.{owner}-{count}.tmp` after the run).

    Another run may create the same directory meanwhile (Ninja runs several
    opgen commands into one fresh tree at once): then the rename fails and the
    new tree is merged into the existing one (`_move_directory`), as if the two
    runs had written one after the other.
    """

    def __init__(self, owner: int) -> None:
        self._owner = owner  # the pid the temporary names carry
        self._temporaries: dict[str, str] = {}  # new top directory -> its temporary name
        self._built: dict[str, str] = {}  # each new directory -> where it is being built

    @classmethod
    def make(cls, directories: Iterable[str], owner: int) -> _NewTrees:
        """Start building each of `directories` that is missing, and its missing parents."""
        trees = cls(owner)
        try:
            for directory in sorted(set(directories)):  # `_missing` puts parents first
                for missing in _missing(directory):
                    if missing not in trees._built:
                        trees._add(missing)
        except BaseException:
            trees.discard()
            raise
        return trees

    def _add(self, directory: str) -> None:
        parent, name = os.path.split(directory)
        if parent in self._built:
            self._built[directory] = os.path.join(self._built[parent], name)
            os.mkdir(self._built[directory])
            return
        for count in itertools.count(1):  # a name left by an earlier run with our pid is skipped
            temporary = os.path.join(parent, f".{name}.{self._owner}-{count}.tmp")
            try:
                os.mkdir(temporary)
            except FileExistsError:
                continue
            self._temporaries[directory] = self._built[directory] = temporary
            return

    def where(self, directory: str) -> str | None:
        """Where a new `directory` is being built; None if it already existed."""
        return self._built.get(directory)

    def holds(self, file: str) -> bool:
        return os.path.dirname(file) in self._built

    def move_into_place(self) -> None:
        for directory in sorted(self._temporaries, key=path_order):
            _move_directory(self._temporaries[directory], directory)
            del self._temporaries[directory]  # only once moved: `discard` removes what is left

    def discard(self) -> None:
        import shutil  # only after a failure

        for temporary in self._temporaries.values():
            shutil.rmtree(temporary, ignore_errors=True)
        self._temporaries.clear()


def _move_directory(temporary: str, directory: str) -> None:
    """Rename the tree built at `temporary` to `directory`, or merge it into `directory`
    if another run created that meanwhile.

    The merge moves each file in (`_move_file`) and each subdirectory the same way,
    then removes the emptied temporary. Linux's rename replaces an empty directory,
    which is as good: what this run built holds everything that did. Any other
    failure (a file where the directory should be, permissions) is raised.
    """
    try:
        os.rename(temporary, directory)
        return
    except OSError as error:
        if error.errno not in (errno.ENOTEMPTY, errno.EEXIST):
            raise
    with os.scandir(temporary) as scan:  # listed first: moving entries out changes it
        entries = [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in scan]
    for name, is_dir in entries:
        move = _move_directory if is_dir else _move_file
        move(os.path.join(temporary, name), os.path.join(directory, name))
    os.rmdir(temporary)


def _move_file(temporary: str, file: str) -> None:
    """Replace `file` with `temporary`, or drop `temporary` if `file` already holds its
    bytes (another run wrote the same): an unchanged file keeps its mtime."""
    try:
        with open(file, "rb") as existing, open(temporary, "rb") as new:
            same = os.fstat(existing.fileno()).st_size == os.fstat(new.fileno()).st_size and (
                existing.read() == new.read()
            )
    except OSError:
        same = False  # missing (or a directory: then os.replace raises)
    if same:
        os.unlink(temporary)
    else:
        os.replace(temporary, file)


# A temporary name of this module: `.{name}.{owner}-{worker}-{count}.tmp` for a file,
# `.{name}.{owner}-{count}.tmp` for a directory; the group is the owner's pid.
# (Compiled where used: only when a directory holds temporary names.)
_TEMPORARY_NAME = r"\..+\.([0-9]+)-(?:[0-9]+-)?[0-9]+\.tmp"


def _leftover_places(layout: Mapping[str, Iterable[str]]) -> set[str]:
    """The directories where a killed run may have left temporaries this run would meet.

    `layout` maps each root to the directories written under it. A killed run
    leaves temporary files in directories it wrote into, and temporary trees
    beside the directories it created (a new root's in the root's parent). So:
    each existing directory from each written one up to its root's parent, or, if
    that is missing, up to the first existing directory above it.
    """
    places: set[str] = set()
    exists: dict[str, bool] = {}
    for root, directories in layout.items():
        top = os.path.dirname(root)
        for directory in directories:
            reached = False
            while True:
                reached = reached or directory == top
                if directory not in exists:
                    exists[directory] = os.path.isdir(directory or os.curdir)
                if exists[directory]:
                    places.add(directory or os.curdir)
                    if reached:
                        break
                parent = os.path.dirname(directory)
                if parent == directory:
                    break
                directory = parent
    return places


def _remove_stale(places: Iterable[str], owner: int) -> None:
    """Remove the temporaries in `places` whose owner is no longer alive.

    One scan per directory, nothing per output file. Removal is best effort and
    races with other runs doing the same, so failures are ignored: a leftover is
    only a hidden file. `owner`'s own names are never stale.
    """
    alive = {owner: True}
    for place in places:
        try:
            with os.scandir(place) as scan:
                entries = [
                    (entry.name, entry.is_dir(follow_symlinks=False))
                    for entry in scan
                    if entry.name[0] == "." and entry.name.endswith(".tmp")
                ]
        except OSError:
            continue
        for name, is_dir in entries:
            match = re.fullmatch(_TEMPORARY_NAME, name)
            if match is None:
                continue
            pid = int(match[1])
            if pid not in alive:
                alive[pid] = _is_alive(pid)
            if alive[pid]:
                continue
            path = os.path.join(place, name)
            if is_dir:
                import shutil  # only for a leftover

                shutil.rmtree(path, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(path)


def _is_alive(pid: int) -> bool:
    """Whether process `pid` exists; True when that cannot be told."""
    if os.name != "posix":  # os.kill would end the process, not probe it
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):  # PermissionError: alive, another user's
        return True
    return True


def _missing(directory: str) -> list[str]:
    """`directory` and its ancestors, outermost first, as far as they are missing."""
    missing: list[str] = []
    while directory and not os.path.isdir(directory):
        missing.append(directory)
        directory = os.path.dirname(directory)
    return missing[::-1]


def _stage_files(
    unit: Sequence[str], targets: Mapping[str, OutputEntry], trees: _NewTrees, owner: int
) -> list[tuple[str, str]]:
    """(temporary file, target) for each changed file of `unit`; all or none staged.

    Files in new directories (`trees`) are written where those are built, not staged.
    `owner` is the process that renames the staged files into place: their names
    carry its pid, and a forked worker whose owner was killed stops writing (the
    next run may be removing what it wrote).
    """
    staged: list[tuple[str, str]] = []
    temporaries = _TemporaryNames(owner)
    forked = os.getpid() != owner
    try:
        for file in unit:
            directory, name = os.path.split(file)
            text = targets[file].render()
            if forked and os.getppid() != owner:
                raise OutputError(f"the run that started this worker (pid {owner}) has ended")
            building = trees.where(directory)
            if building is not None:
                _write_new(os.path.join(building, name), text.encode("utf-8"))
                continue
            temp = _stage_if_changed(file, text, temporaries)
            if temp is not None:
                staged.append((temp, file))
    except BaseException:
        _discard(staged)
        raise
    return staged


def _discard(staged: Iterable[tuple[str, str]]) -> None:
    """Remove the temporary files of staged (temporary, target) pairs."""
    for temp, _ in staged:
        _remove(temp)


def write_if_changed(file: str | Path, text: str) -> bool:
    """Atomically replace `file` with `text` (UTF-8) unless it already holds it."""
    os.makedirs(os.path.dirname(file) or ".", exist_ok=True)
    temp = _stage_if_changed(os.fspath(file), text, _TemporaryNames(os.getpid()))
    if temp is None:
        return False
    try:
        os.replace(temp, file)
    except BaseException:
        _remove(temp)
        raise
    return True


class _TemporaryNames:
    """Names for temporary files beside their targets, `.{name}.{owner}-{worker}-{count}.tmp`:
    unique per process, and per file within it (`_create_temp` skips one an earlier
    run with the same pids left). `owner` is the process that renames them into place."""

    def __init__(self, owner: int) -> None:
        self.prefix = f"{owner}-{os.getpid()}-"
        self.count = 0

    def next(self, name: str) -> str:
        self.count += 1
        return f".{name}.{self.prefix}{self.count}.tmp"


def _stage_if_changed(file: str, text: str, temporaries: _TemporaryNames) -> str | None:
    """A temporary file beside `file` holding `text`, or None if `file` already holds it.

    The temporary file gets the mode of the file it will replace, if any.
    """
    data = text.encode("utf-8")
    directory, name = os.path.split(file)
    mode: int | None = None
    try:
        with open(file, "rb") as existing:
            if existing.read() == data:
                return None
            mode = stat.S_IMODE(os.fstat(existing.fileno()).st_mode)
    except OSError:
        pass  # missing or unreadable: write it
    temp, fd = _create_temp(directory, name, temporaries)
    try:
        _write_all(fd, data)
        if mode is not None:
            os.chmod(temp, mode)
    except BaseException:
        _remove(temp)
        raise
    return temp


def _write_new(file: str, data: bytes) -> None:
    """Write a file that does not exist yet, in a directory this run is building."""
    _write_all(os.open(file, _CREATE_FLAGS, 0o666), data)


def _write_all(fd: int, data: bytes) -> None:
    """Write `data` to `fd` and close it."""
    try:
        view = memoryview(data)
        while view:  # os.write may write less than asked
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def _create_temp(directory: str, name: str, temporaries: _TemporaryNames) -> tuple[str, int]:
    while True:  # a name left by an earlier, killed run is skipped
        temp = os.path.join(directory, temporaries.next(name))
        try:
            return temp, os.open(temp, _CREATE_FLAGS, 0o666)
        except FileExistsError:
            continue
