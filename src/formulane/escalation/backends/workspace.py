"""Per-job host-backed workspaces: staged inputs in, artifacts out, nothing followed out of it.

Contract: a workspace lives in a per-job box: a host directory (a sized tmpfs mounted by us
when we may mount, so ``workspace_bytes`` is enforced and a crash leaves the files behind for
collection) holding ``work/`` owned by the job's uid and ``job/`` owned by root. `stage` writes input files (read-write ones owned by the job, read-only ones by
root with mode 0444; the bubblewrap backend also bind-mounts those read-only). `collect` walks
the tree with directory file descriptors and ``O_NOFOLLOW`` so a symlink planted by the job can
never make the host read a file outside the workspace, matches the declared globs only, and
stops at the artifact count and byte budgets. `destroy` unmounts and deletes. Boxes live in a
per-process instance directory (itself a small tmpfs when we may mount, released by
`release_instance_dir`). `reap` removes workspaces left by processes that no longer exist.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import hashlib
import json
import os
import re
import shutil
import stat
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, cast

from ...jsonshape import is_object
from ..contract import FileSpec
from .cgroups import instance_alive, instance_name

RUNNER_DIR = ".formulane"
DONE_FILE = "done.json"
RESULT_FILE = "result"  # the declared result, written by the bootstrap
SHELL_FILE = "shell"  # shell-outs whose command could not run (bootstrap.py `_watch_shell`)
WORK_DIR = "work"
JOB_DIR = "job"
OWNER_FILE = "owner"
#: Bounds of the artifact walk (`Workspace.collect`): directory levels, and directory entries
#: looked at in all. Configurable per backend (``LocalRunner(artifact_max_depth=...)``).
MAX_WALK_DEPTH = 64
MAX_WALK_ENTRIES = 100_000  # in a pooled box: the job-and-attempt name it was claimed for

_MS_RDONLY = 1
_MS_NOSUID = 2
_MS_NODEV = 4
_MNT_DETACH = 2
_libc: ctypes.CDLL | None = None


def _lib() -> ctypes.CDLL:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    return _libc


def mount_tmpfs(target: Path, *, size: int, uid: int, gid: int, mode: int = 0o700) -> None:
    opts = f"size={size},mode={mode:o},uid={uid},gid={gid},nr_inodes=65536".encode()
    rc = _lib().mount(b"tmpfs", str(target).encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV, opts)
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount tmpfs on {target}: {os.strerror(err)}")


def mount_overlay_view(target: Path, lower: Path, empty: Path) -> None:
    """A read-only overlay of ``lower`` at ``target``, whose mount options name the layers as
    ``/proc/self/fd/N`` (descriptors of this process at mount time) instead of host paths.

    A bind mount of ``lower`` shows its host path in every ``/proc/*/mountinfo`` of the
    sandbox it is bound into (the mount's root within its filesystem); an overlay is a
    filesystem of its own, so its root is ``/`` and its options hold only what was given."""
    fds = [os.open(lower, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC),
           os.open(empty, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)]
    try:
        opts = f"lowerdir=/proc/self/fd/{fds[0]}:/proc/self/fd/{fds[1]}".encode()
        rc = _lib().mount(b"formulane-env", str(target).encode(), b"overlay",
                          _MS_RDONLY | _MS_NOSUID | _MS_NODEV, opts)
        if rc != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"mount overlay on {target}: {os.strerror(err)}")
    finally:
        for fd in fds:
            os.close(fd)


def unmount(target: Path) -> None:
    if _lib().umount2(str(target).encode(), _MNT_DETACH) != 0:
        err = ctypes.get_errno()
        if err not in (errno.EINVAL, errno.ENOENT):
            raise OSError(err, f"umount {target}: {os.strerror(err)}")


def is_mountpoint(path: Path) -> bool:
    try:
        return os.path.ismount(path)
    except OSError:
        return False


def can_mount(scratch: Path) -> bool:
    """Whether this process may mount a tmpfs (root with CAP_SYS_ADMIN); probed for real."""
    probe = scratch / f".mount-probe-{os.getpid()}"
    try:
        probe.mkdir(parents=True, exist_ok=True)
        mount_tmpfs(probe, size=1 << 20, uid=os.getuid(), gid=os.getgid())
    except OSError:
        shutil.rmtree(probe, ignore_errors=True)
        return False
    unmount(probe)
    probe.rmdir()
    return True


def glob_regex(patterns: Iterable[str]) -> re.Pattern[str]:
    """Artifact globs to one regex: ``**/`` spans directories, ``*`` and ``?`` stay in one."""
    parts: list[str] = []
    for pattern in patterns:
        out = ""
        i = 0
        while i < len(pattern):
            if pattern.startswith("**/", i):
                out += "(?:[^/]+/)*"
                i += 3
            elif pattern.startswith("**", i):
                out += ".*"
                i += 2
            elif pattern[i] == "*":
                out += "[^/]*"
                i += 1
            elif pattern[i] == "?":
                out += "[^/]"
                i += 1
            else:
                out += re.escape(pattern[i])
                i += 1
        parts.append(out)
    # DOTALL and \Z: a name may hold a newline, and '$' would also match before a final one.
    return re.compile("^(?:" + "|".join(parts) + r")\Z" if parts else "(?!)", re.DOTALL)


@dataclass
class Collected:
    path: str
    size: int
    sha256: str
    data: bytes


@dataclass
class CollectReport:
    files: list[Collected]
    skipped: list[str]  # why a matching entry was not collected


class Workspace:
    """One job's box: a directory (a tmpfs when we may mount) holding ``work/`` (the job's
    writable workspace, owned by its uid) and ``job/`` (root-owned, mounted read-only for the
    job: bootstrap, code, inputs). One mount and one directory to remove per job."""

    def __init__(self, box: Path, uid: int, gid: int, mounted: bool) -> None:
        self.box = box
        self.path = box / WORK_DIR
        self.job_dir = box / JOB_DIR
        self.uid = uid
        self.gid = gid
        self.mounted = mounted
        self.ro_paths: list[str] = []
        self.destroyed = False

    @classmethod
    def create(cls, root: Path, name: str, *, uid: int, gid: int, size: int,
               use_tmpfs: bool) -> "Workspace":
        base = instance_dir(root, use_tmpfs)
        box = base / name
        box.mkdir(mode=0o711)
        mounted = False
        if use_tmpfs:
            try:
                mount_tmpfs(box, size=size, uid=0, gid=0, mode=0o711)
                mounted = True
            except OSError:
                mounted = False
        ws = cls(box, uid, gid, mounted)
        ws.path.mkdir(mode=0o700)
        os.chown(ws.path, uid, gid)
        ws.job_dir.mkdir(mode=0o755)
        runner = ws.path / RUNNER_DIR
        runner.mkdir()
        os.chown(runner, uid, gid)
        return ws

    def claim(self, name: str) -> None:
        """Record the job a pre-started box now belongs to, so `find` can salvage it by name."""
        fd = os.open(self.box / OWNER_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW,
                     0o600)
        try:
            os.write(fd, name.encode())
        finally:
            os.close(fd)

    def stage(self, files: Iterable[FileSpec]) -> list[tuple[str, Path]]:
        """Write the input files; returns (relative path, host path) of the read-only ones."""
        ro: list[tuple[str, Path]] = []
        for spec in files:
            target = self.path / spec.path
            self._mkdirs(target.parent)
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            try:
                os.write(fd, spec.content)
                if spec.mode == "rw":
                    os.fchown(fd, self.uid, self.gid)
                    os.fchmod(fd, 0o600)
                else:
                    os.fchmod(fd, 0o444)
            finally:
                os.close(fd)
            if spec.mode == "ro":
                ro.append((spec.path, target))
                self.ro_paths.append(spec.path)
        return ro

    def _mkdirs(self, directory: Path) -> None:
        rel = directory.relative_to(self.path)
        current = self.path
        for part in rel.parts:
            current = current / part
            if not current.exists():
                current.mkdir(mode=0o700)
                os.chown(current, self.uid, self.gid)

    def write_text(self, rel: str, text: str) -> None:
        """Host-side helper for runners (sessions); the file belongs to the job afterwards."""
        target = self.path / rel
        self._mkdirs(target.parent)
        target.write_text(text)
        os.chown(target, self.uid, self.gid)

    def collect(self, globs: Iterable[str], *, max_count: int, max_bytes: int,
                exclude: Callable[[str], bool] | None = None, max_depth: int = MAX_WALK_DEPTH,
                max_entries: int = MAX_WALK_ENTRIES) -> CollectReport:
        """The declared artifacts, walked without recursion: at most ``max_depth`` directory
        levels and ``max_entries`` directory entries are looked at, so a job that builds
        3,000 nested directories or a million empty files costs a bounded walk (what was cut
        is in ``skipped``). A name that is not valid UTF-8 is refused, shown escaped: it
        could not be stored in a receipt, and escaping it into a stored name could collide
        with a real one."""
        matcher = glob_regex(globs)
        files: list[Collected] = []
        skipped: list[str] = []
        budget = max_bytes
        try:
            top = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError as exc:
            return CollectReport([], [f"workspace unreadable: {exc.strerror}"])
        seen = over_count = 0
        # Depth-first with an explicit stack of (directory fd, relative path, subdirectories
        # still to visit): at most ``max_depth`` descriptors are open at any time.
        stack: list[tuple[int, str, list[str]]] = []
        pending: tuple[int, str] | None = (top, "")
        try:
            top = -1  # owned by the stack from here on
            while pending is not None or stack:
                if pending is not None:
                    dirfd, rel_dir = pending
                    pending = None
                    subdirs, names, seen = _list_dir(dirfd, seen, max_entries)
                    stack.append((dirfd, rel_dir, sorted(subdirs, reverse=True)))
                    for fname in sorted(names):
                        rel = f"{rel_dir}/{fname}" if rel_dir else fname
                        if not matcher.match(rel) or (exclude is not None and exclude(rel)):
                            continue
                        if rel in self.ro_paths:
                            continue
                        if not _utf8(rel):
                            skipped.append(f"{escape_name(rel)}: name is not valid UTF-8, "
                                           "refused")
                            continue
                        if len(files) >= max_count:
                            over_count += 1
                            continue
                        got = _read_regular(dirfd, fname, budget)
                        if isinstance(got, str):
                            skipped.append(f"{rel}: {got}")
                            continue
                        budget -= len(got)
                        files.append(Collected(rel, len(got), hashlib.sha256(got).hexdigest(),
                                               got))
                    if seen > max_entries:
                        # First: it says the list below may be incomplete.
                        skipped.insert(0, f"walk stopped after {max_entries} directory entries "
                                          "(artifact walk limit); the rest was not looked at")
                        break
                    continue
                dirfd, rel_dir, subdirs = stack[-1]
                if not subdirs:
                    stack.pop()
                    os.close(dirfd)
                    continue
                name = subdirs.pop()
                rel = f"{rel_dir}/{name}" if rel_dir else name
                if rel == RUNNER_DIR:
                    continue
                if len(stack) >= max_depth:
                    skipped.append(f"{escape_name(rel)}/: deeper than {max_depth} directory "
                                   "levels (artifact walk limit), not walked")
                    continue
                try:
                    child = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW,
                                    dir_fd=dirfd)
                except OSError as exc:
                    skipped.append(f"{escape_name(rel)}/: unreadable ({exc.strerror})")
                    continue
                pending = (child, rel)
        finally:
            for dirfd, _, _ in stack:
                os.close(dirfd)
            if pending is not None:
                os.close(pending[0])
            if top >= 0:
                os.close(top)
        if over_count:
            skipped.insert(0, f"artifact count limit {max_count} reached: {over_count} more "
                              "matching files not collected")
        return CollectReport(files, skipped)

    def read_result(self, max_bytes: int) -> bytes | None:
        """The bootstrap's result record (``.formulane/result``), at most ``max_bytes`` plus
        its header; None if there is none, it is not a regular file, or it is larger."""
        try:
            fd = os.open(self.path / RUNNER_DIR / RESULT_FILE, os.O_RDONLY | os.O_NOFOLLOW
                         | os.O_NONBLOCK)
        except OSError:
            return None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes + 1024:
                return b"E?" + b"the result file is too large or not a file"
            return os.read(fd, max_bytes + 1024)
        finally:
            os.close(fd)

    def shell_failures(self, limit: int = 20) -> list[str]:
        """Shell-outs the bootstrap saw fail to run their command (``status<TAB>command``
        lines), at most ``limit``; the file is the job's to write, so this is a hint."""
        try:
            fd = os.open(self.path / RUNNER_DIR / SHELL_FILE, os.O_RDONLY | os.O_NOFOLLOW
                         | os.O_NONBLOCK)
        except OSError:
            return []
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return []
            raw = os.read(fd, 16384)
        finally:
            os.close(fd)
        out: list[str] = []
        for line in raw.decode("utf-8", "replace").splitlines()[:limit]:
            status, _, command = line.partition("\t")
            out.append(f"the shell-out {command!r} could not run its command (exit status "
                       f"{status}: not found or not executable here; this sandbox has no "
                       "shell)")
        return out

    def done_manifest(self) -> dict[str, str]:
        """The job's own completion manifest (path -> sha256), if it wrote a sane one."""
        try:
            fd = os.open(self.path / RUNNER_DIR / DONE_FILE, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            return {}
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return {}
            raw = os.read(fd, 1 << 20)
        finally:
            os.close(fd)
        try:
            data = json.loads(raw)
        except ValueError:
            return {}
        if not is_object(data):
            return {}
        return {k: v for k, v in data.items()
                if isinstance(cast(object, k), str) and isinstance(v, str) and re.fullmatch(r"[0-9a-f]{64}", v)}

    def destroy(self) -> bool:
        if self.destroyed:
            return True
        try:
            if self.mounted and is_mountpoint(self.box):
                unmount(self.box)
                self.box.rmdir()
            else:
                remove_tree(self.box)
            self.destroyed = not self.box.exists()
        except OSError:
            self.destroyed = False
        return self.destroyed


_instance_lock = threading.Lock()


def instance_dir(root: Path, use_tmpfs: bool) -> Path:
    """This process's directory of boxes under ``root``. When we may mount, it is a small tmpfs
    itself: the boxes' mountpoint directories are then created and removed in memory (an
    rmdir on the host's ext4 cost ~4 ms per job, with journal stalls under load)."""
    base = root / instance_name()
    with _instance_lock:
        base.mkdir(parents=True, exist_ok=True)
        if use_tmpfs and not is_mountpoint(base):
            try:
                # It holds only the boxes' mountpoints; the cap matters only if mounting a
                # box ever fails and its files land here (then not_enforced, as on disk).
                mount_tmpfs(base, size=1 << 30, uid=0, gid=0, mode=0o711)
            except OSError:
                pass  # boxes still work on the host directory, only slower
        os.chmod(base, 0o711)
    return base


def release_instance_dir(root: Path) -> bool:
    """Unmount and remove this process's box directory if no box is left in it (a backend's
    `close`; another backend sharing ``root`` keeps it while it has boxes). True if gone."""
    base = root / instance_name()
    with _instance_lock:
        try:
            if any(base.iterdir()):
                return False
        except FileNotFoundError:
            return True
        if is_mountpoint(base):
            unmount(base)
        try:
            base.rmdir()
        except OSError:
            return False
    return True


def remove_tree(root: Path) -> None:
    """Delete a directory tree of any depth without recursion and without long paths (a job
    may leave thousands of nested directories: ``shutil.rmtree`` recursed, and paths grew past
    PATH_MAX). One directory descriptor is open at a time; symlinks are unlinked, never
    followed. Errors are swallowed: what is left is found by `reap` later."""
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        try:
            os.unlink(root)
        except OSError:
            pass
        return
    names: list[str] = []
    try:
        while True:
            sub = None
            with os.scandir(fd) as entries:
                for entry in entries:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            sub = entry.name
                            break
                        os.unlink(entry.name, dir_fd=fd)
                    except OSError:
                        continue
            if sub is not None:
                child = os.open(sub, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                os.close(fd)
                fd = child
                names.append(sub)
                continue
            if not names:
                break
            parent = os.open("..", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = parent
            os.rmdir(names.pop(), dir_fd=fd)
    except OSError:
        pass
    finally:
        os.close(fd)
    try:
        os.rmdir(root)
    except OSError:
        pass


def _utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def escape_name(name: str) -> str:
    """A file name as printable text: bytes that are not UTF-8 as ``\\xNN``."""
    return os.fsencode(name).decode("utf-8", "backslashreplace")


def _list_dir(dirfd: int, seen: int, limit: int) -> tuple[list[str], list[str], int]:
    """(subdirectory names, other names, entries seen so far) of one directory, reading no
    more than ``limit`` entries in all (``seen`` past ``limit`` means the walk was cut)."""
    subdirs: list[str] = []
    names: list[str] = []
    with os.scandir(dirfd) as entries:
        for entry in entries:
            seen += 1
            if seen > limit:
                break
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            (subdirs if is_dir else names).append(entry.name)
    return subdirs, names, seen


def _read_regular(dirfd: int, name: str, budget: int) -> bytes | str:
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dirfd)
    except OSError as exc:
        return "symlink, refused" if exc.errno == errno.ELOOP else f"unreadable ({exc.strerror})"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return "not a regular file"
        if info.st_size > budget:
            return f"{info.st_size} bytes exceed the remaining artifact budget of {budget}"
        chunks: list[bytes] = []
        remaining = budget + 1
        while remaining > 0:
            chunk = os.read(fd, min(1 << 20, remaining))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        data = b"".join(chunks)
        if len(data) > budget:
            return "grew past the artifact budget while being read"
        return data
    finally:
        os.close(fd)


def find(root: Path, name: str) -> Path | None:
    """The box called ``name`` under any instance directory (crash recovery)."""
    if not root.is_dir():
        return None
    for inst in root.iterdir():
        candidate = inst / name
        if (candidate / WORK_DIR).is_dir():
            return candidate.resolve()
    for inst in root.iterdir():  # a pooled box, named at start-up, claimed by the job later
        if not inst.is_dir():
            continue
        for box in inst.iterdir():
            try:
                owner = (box / OWNER_FILE).read_bytes()
            except OSError:
                continue
            if owner == name.encode() and (box / WORK_DIR).is_dir():
                return box
    return None


def reap(root: Path, keep: Callable[[str], bool] | None = None) -> int:
    """Remove workspaces of dead instances, except names ``keep`` wants. Returns count."""
    removed = 0
    if not root.is_dir():
        return 0
    for inst in root.iterdir():
        if not inst.is_dir() or instance_alive(inst.name):
            continue
        for ws in list(inst.iterdir()):
            if keep is not None and keep(ws.name):
                continue
            if ws.is_symlink():
                ws.unlink()
                continue
            if is_mountpoint(ws):
                try:
                    unmount(ws)
                except OSError:
                    continue
            remove_tree(ws)  # never follows symlinks out of the box
            removed += 1
        try:
            if is_mountpoint(inst):
                unmount(inst)
            inst.rmdir()
        except OSError:
            pass
    return removed
