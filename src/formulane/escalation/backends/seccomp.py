"""A classic-BPF seccomp filter built with `struct`, no libseccomp needed.

Contract: `build_filter(arch, network_open)` returns the bytes of a ``struct sock_filter[]``
program that bubblewrap loads with ``--seccomp FD`` (or the bootstrap loads with prctl in the
plain-process backend). It kills the process on a foreign architecture, refuses x32 syscalls,
refuses socket()/socketpair() for every address family but AF_UNIX unless the network is open
(so no internet socket can even be created), refuses namespace-creating clone flags, clone3
(ENOSYS, so libc falls back to the filterable clone), io_uring (which could bypass socket
filtering) and a list of kernel-administration syscalls; everything else is allowed. Refused
calls fail with EPERM, which Python reports as ``PermissionError``.
"""

from __future__ import annotations

import errno
import functools
import os
import platform
import struct
from dataclasses import dataclass

from ...errors import EscalationError

# BPF opcodes (linux/filter.h).
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06

_RET_KILL_PROCESS = 0x80000000
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000

# struct seccomp_data offsets: nr, arch, instruction_pointer, args[6] (little-endian low words).
_OFF_NR = 0
_OFF_ARCH = 4
_OFF_ARG0 = 16

_AF_UNIX = 1
# CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET | NEWTIME
_CLONE_NS_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 \
    | 0x40000000 | 0x00000080


@dataclass(frozen=True)
class _ArchTable:
    audit_arch: int
    x32_bit: int | None
    socket: int
    socketpair: int
    clone: int
    clone3: int
    denied: dict[str, int]


_COMMON_NEW = {"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
               "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431,
               "fsmount": 432, "fspick": 433}

_TABLES: dict[str, _ArchTable] = {
    "x86_64": _ArchTable(
        audit_arch=0xC000003E, x32_bit=0x40000000, socket=41, socketpair=53, clone=56,
        clone3=435,
        denied={"ptrace": 101, "mount": 165, "umount2": 166, "unshare": 272, "setns": 308,
                "keyctl": 250, "add_key": 248, "request_key": 249, "bpf": 321,
                "perf_event_open": 298, "userfaultfd": 323, "kexec_load": 246,
                "kexec_file_load": 320, "init_module": 175, "finit_module": 313,
                "delete_module": 176, "pivot_root": 155, "chroot": 161, "swapon": 167,
                "swapoff": 168, "reboot": 169, "acct": 163, "process_vm_readv": 310,
                "process_vm_writev": 311, "iopl": 172, "ioperm": 173, **_COMMON_NEW}),
    "aarch64": _ArchTable(
        audit_arch=0xC00000B7, x32_bit=None, socket=198, socketpair=199, clone=220, clone3=435,
        denied={"ptrace": 117, "mount": 40, "umount2": 39, "unshare": 97, "setns": 268,
                "keyctl": 219, "add_key": 217, "request_key": 218, "bpf": 280,
                "perf_event_open": 241, "userfaultfd": 282, "kexec_load": 104,
                "kexec_file_load": 294, "init_module": 105, "finit_module": 273,
                "delete_module": 106, "pivot_root": 41, "chroot": 51, "swapon": 224,
                "swapoff": 225, "reboot": 142, "acct": 89, "process_vm_readv": 270,
                "process_vm_writev": 271, **_COMMON_NEW}),
}


def supported_arch(arch: str | None = None) -> bool:
    return (arch or platform.machine()) in _TABLES


class _Program:
    """A tiny assembler: instructions with symbolic jump targets resolved at the end."""

    def __init__(self) -> None:
        self.code: list[tuple[int, object, object, int]] = []
        self.labels: dict[str, int] = {}

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def emit(self, op: int, k: int, jt: object = 0, jf: object = 0) -> None:
        self.code.append((op, jt, jf, k))

    def assemble(self) -> bytes:
        out = bytearray()
        for index, (op, jt, jf, k) in enumerate(self.code):
            offsets: list[int] = []
            for target in (jt, jf):
                if isinstance(target, str):
                    delta = self.labels[target] - index - 1
                    if not 0 <= delta <= 255:
                        raise EscalationError(f"seccomp jump to {target} out of range",
                                              code="E901")
                    offsets.append(delta)
                else:
                    offsets.append(int(target))  # type: ignore[call-overload]
            out += struct.pack("<HBBI", op, offsets[0], offsets[1], k & 0xFFFFFFFF)
        return bytes(out)


@functools.lru_cache(maxsize=8)
def build_filter(arch: str | None = None, *, network_open: bool = False) -> bytes:
    """The filter program for ``arch`` (default: this machine); built once, then cached."""
    machine = arch or platform.machine()
    table = _TABLES.get(machine)
    if table is None:
        raise EscalationError(f"no seccomp syscall table for architecture {machine!r}",
                              code="E602", hint=f"supported: {', '.join(sorted(_TABLES))}")
    p = _Program()
    p.emit(_LD_W_ABS, _OFF_ARCH)
    p.emit(_JEQ_K, table.audit_arch, 1, 0)
    p.emit(_RET_K, _RET_KILL_PROCESS)
    p.emit(_LD_W_ABS, _OFF_NR)
    if table.x32_bit is not None:
        p.emit(_JGE_K, table.x32_bit, "deny", 0)
    for nr in sorted(table.denied.values()):
        p.emit(_JEQ_K, nr, "deny", 0)
    p.emit(_JEQ_K, table.clone3, "enosys", 0)
    p.emit(_JEQ_K, table.clone, "clone", 0)
    if not network_open:
        p.emit(_JEQ_K, table.socket, "socket", 0)
        p.emit(_JEQ_K, table.socketpair, "socket", 0)
    p.emit(_RET_K, _RET_ALLOW)
    p.label("clone")
    p.emit(_LD_W_ABS, _OFF_ARG0)
    p.emit(_JSET_K, _CLONE_NS_FLAGS, "deny", 0)
    p.emit(_RET_K, _RET_ALLOW)
    if not network_open:
        p.label("socket")
        p.emit(_LD_W_ABS, _OFF_ARG0)
        p.emit(_JEQ_K, _AF_UNIX, 0, "deny")
        p.emit(_RET_K, _RET_ALLOW)
    p.label("deny")
    p.emit(_RET_K, _RET_ERRNO | errno.EPERM)
    p.label("enosys")
    p.emit(_RET_K, _RET_ERRNO | errno.ENOSYS)
    return p.assemble()


def filter_fd(program: bytes) -> int:
    """A sealed-size memfd holding ``program``, positioned at 0, ready for ``--seccomp FD``.

    One fd per launch: bwrap reads to EOF, and a shared offset would break concurrent launches.
    """
    fd = os.memfd_create("formulane-seccomp", os.MFD_CLOEXEC)
    try:
        os.write(fd, program)
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


def denied_syscalls(arch: str | None = None) -> list[str]:
    """Names of the syscalls the filter refuses outright (for receipts and docs)."""
    table = _TABLES[arch or platform.machine()]
    return sorted(table.denied) + ["clone3 (ENOSYS)", "clone with namespace flags",
                                   "socket/socketpair except AF_UNIX"]
