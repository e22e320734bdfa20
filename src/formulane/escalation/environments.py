"""Declared environments: a named, content-digested, lean interpreter tree plus pinned packages.

Contract: an `EnvironmentSpec` names an interpreter (default: the real binary behind this
process, never a pyenv shim or a venv symlink) and pinned packages that are already installed
on the host. `EnvironmentStore.get` materializes it once into ``<root>/<digest>/``: the binary,
its shared libraries and ELF loader, the standard library without tests, GUI toolkits and
site-packages, and exactly the declared packages copied from the host's site directories. The
digest is a sha256 over every file's path, mode and content, so a receipt's environment digest
identifies the bytes that ran. Nothing is ever installed from a network: a package that is not
on the host is refused with E602. `resolve` checks a job's runtime (name, version, digest pin,
packages) against the store and explains any mismatch.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import uuid
from importlib import metadata
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ..errors import EscalationError
from .contract import PinnedRequirement, RuntimeSpec

#: Top-level stdlib entries that a job never needs and that cost space or pull in X11.
STDLIB_EXCLUDED = frozenset({
    "test", "idlelib", "tkinter", "turtledemo", "turtle.py", "ensurepip", "lib2to3",
    "site-packages", "dist-packages", "__phello__", "Tools",
})
_DYNLOAD_EXCLUDED = re.compile(r"^(_tkinter|_test|xxlimited|_xxtestfuzz|_ctypes_test)")

_PROBE = r"""
import json, os, sys, sysconfig
print(json.dumps({
  "version": "%d.%d.%d" % sys.version_info[:3],
  "executable": os.path.realpath(sys.executable),
  "prefix": sys.base_prefix,
  "stdlib": sysconfig.get_path("stdlib"),
  "dynload": os.path.join(sysconfig.get_path("platstdlib"), "lib-dynload"),
}))
"""


class EnvironmentSpec(BaseModel):
    """What an environment should contain."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]{0,63}$")
    python: str | None = None
    packages: tuple[PinnedRequirement, ...] = ()
    package_sources: tuple[str, ...] = ()


class Environment(BaseModel):
    """A materialized environment (immutable files under ``root``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    digest: str
    root: str
    python: str            # relative to root, e.g. bin/python3.11
    version: str           # 3.11.7
    elf_interpreter: str | None  # absolute path the binary expects, e.g. /lib64/ld-linux-...
    elf_interpreter_copy: str | None  # relative copy inside root
    stdlib: str            # relative, e.g. lib/python3.11
    site_packages: str     # relative
    packages: tuple[str, ...] = ()
    modules: dict[str, str] = Field(default_factory=dict[str, str])  # top-level module -> package key

    @property
    def host_python(self) -> Path:
        return Path(self.root) / self.python

    @property
    def minor(self) -> str:
        return ".".join(self.version.split(".")[:2])

    def package_for_module(self, module: str) -> str | None:
        return self.modules.get(module.split(".")[0])


def real_interpreter() -> str:
    """The real binary behind this process (resolves venvs, symlinks and version shims)."""
    base = getattr(sys, "_base_executable", None) or sys.executable
    return os.path.realpath(base)


def _probe_interpreter(python: str) -> dict[str, str]:
    try:
        out = subprocess.run([python, "-I", "-S", "-c", _PROBE], capture_output=True, text=True,
                             timeout=30, stdin=subprocess.DEVNULL, env={}, check=True)
    except (OSError, subprocess.SubprocessError) as exc:
        raise EscalationError(f"cannot inspect interpreter {python}: {exc}", code="E602") from None
    info: dict[str, str] = json.loads(out.stdout)
    head = Path(info["executable"]).read_bytes()[:4]
    if head != b"\x7fELF":
        raise EscalationError(f"{info['executable']} is not an ELF binary (a shim script?)",
                              code="E602", hint="point the environment at the real interpreter")
    return info


def _ldd(path: Path) -> tuple[list[str], str | None]:
    """Resolved shared libraries of one ELF file, and its loader path."""
    try:
        out = subprocess.run(["ldd", str(path)], capture_output=True, text=True, timeout=30,
                             stdin=subprocess.DEVNULL).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise EscalationError(f"ldd failed on {path}: {exc}", code="E602",
                              hint="environments need ldd (Debian package libc-bin)") from None
    libs: list[str] = []
    loader = None
    for line in out.splitlines():
        parts = line.split()
        if "=>" in parts:
            target = parts[parts.index("=>") + 1]
            if target.startswith("/"):
                libs.append(target)
        elif parts and parts[0].startswith("/"):
            loader = parts[0]
    return libs, loader


def _is_elf(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def tree_digest(root: Path) -> str:
    """sha256 over (path, executable bit, content) of every file and symlink, sorted."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            full = Path(dirpath) / name
            rel = full.relative_to(root).as_posix()
            if full.is_symlink():
                h.update(f"L {rel} {os.readlink(full)}\n".encode())
                continue
            fh = hashlib.sha256()
            with open(full, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    fh.update(block)
            mode = "x" if os.stat(full).st_mode & 0o111 else "-"
            h.update(f"F {rel} {mode} {fh.hexdigest()}\n".encode())
    return "sha256:" + h.hexdigest()


def _find_distribution(req: PinnedRequirement, sources: list[str]) -> metadata.Distribution:
    seen: list[str] = []
    for dist in metadata.distributions(path=sources):
        name = dist.metadata["Name"] or ""
        if re.sub(r"[-_.]+", "-", name).lower() != req.key:
            continue
        if dist.version == req.version:
            return dist
        seen.append(dist.version)
    found = f" (found {', '.join(sorted(set(seen)))})" if seen else ""
    raise EscalationError(
        f"package {req} is not installed on the host{found}", code="E602",
        hint="environments are built only from preinstalled packages; install it on the "
             "host (or pin the installed version) and register the environment again")


class EnvironmentStore:
    """Named environments materialized under one directory; thread-safe, process-safe."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        os.chmod(self.root, 0o755)
        self._specs: dict[str, EnvironmentSpec] = {"default": EnvironmentSpec(name="default")}
        self._built: dict[str, Environment] = {}
        self._lock = threading.Lock()

    def register(self, spec: EnvironmentSpec) -> None:
        with self._lock:
            self._specs[spec.name] = spec
            self._built.pop(spec.name, None)

    def names(self) -> list[str]:
        return sorted(self._specs)

    def get(self, name: str = "default") -> Environment:
        with self._lock:
            if name in self._built:
                return self._built[name]
            spec = self._specs.get(name)
            if spec is None:
                raise EscalationError(f"unknown environment {name!r}", code="E603",
                                      hint=f"declared environments: {', '.join(self.names())}")
            env = self._materialize(spec)
            self._built[name] = env
            return env

    def resolve(self, runtime: RuntimeSpec) -> Environment:
        env = self.get(runtime.environment)
        if runtime.version and not (env.version == runtime.version
                                    or env.version.startswith(runtime.version + ".")):
            raise EscalationError(
                f"environment {env.name!r} runs Python {env.version}, the job asks for "
                f"{runtime.version}", code="E603")
        if runtime.environment_digest and runtime.environment_digest != env.digest:
            raise EscalationError(
                f"environment {env.name!r} has digest {env.digest}, the job pins "
                f"{runtime.environment_digest}", code="E603",
                hint="the environment changed since the job was written; re-plan the job")
        missing = [str(p) for p in runtime.packages if str(p) not in env.packages]
        if missing:
            raise EscalationError(
                f"environment {env.name!r} does not provide {', '.join(missing)}", code="E603",
                hint=f"it provides: {', '.join(env.packages) or 'the standard library only'}; "
                     "declare a new environment instead of installing inside a job")
        return env

    def verify(self, name: str = "default") -> bool:
        env = self.get(name)
        return tree_digest(Path(env.root)) == env.digest

    # -- building ---------------------------------------------------------------------------

    def _materialize(self, spec: EnvironmentSpec) -> Environment:
        python = spec.python or real_interpreter()
        identity = os.stat(python)
        key = hashlib.sha256(json.dumps({
            "spec": spec.model_dump(mode="json"), "python": os.path.realpath(python),
            "size": identity.st_size, "mtime": identity.st_mtime_ns,
        }, sort_keys=True).encode()).hexdigest()
        index = self.root / "index" / f"{key}.json"
        if index.exists():
            env = Environment.model_validate_json(index.read_text())
            if Path(env.root).is_dir():
                return env
        info = _probe_interpreter(python)
        build = self.root / f".build-{uuid.uuid4().hex}"
        try:
            env = self._build(spec, info, build)
        except BaseException:
            shutil.rmtree(build, ignore_errors=True)
            raise
        index.parent.mkdir(exist_ok=True)
        tmp = index.with_suffix(f".{uuid.uuid4().hex}.tmp")
        tmp.write_text(env.model_dump_json())
        os.replace(tmp, index)
        return env

    def _build(self, spec: EnvironmentSpec, info: dict[str, str], build: Path) -> Environment:
        minor = ".".join(info["version"].split(".")[:2])
        (build / "bin").mkdir(parents=True)
        lib = build / "lib"
        lib.mkdir()
        exe = build / "bin" / f"python{minor}"
        shutil.copy2(info["executable"], exe)
        stdlib_rel = f"lib/python{minor}"
        stdlib = build / stdlib_rel

        def ignore(directory: str, names: list[str]) -> list[str]:
            if os.path.realpath(directory) == os.path.realpath(info["stdlib"]):
                return [n for n in names if n in STDLIB_EXCLUDED or n.startswith("config-")]
            if os.path.basename(directory) == "lib-dynload":
                return [n for n in names if _DYNLOAD_EXCLUDED.match(n)]
            return []

        shutil.copytree(info["stdlib"], stdlib, ignore=ignore, symlinks=True)
        if not (stdlib / "lib-dynload").exists() and os.path.isdir(info["dynload"]):
            shutil.copytree(info["dynload"], stdlib / "lib-dynload",
                            ignore=lambda d, n: [x for x in n if _DYNLOAD_EXCLUDED.match(x)])
        site = stdlib / "site-packages"
        site.mkdir()
        packages, modules = self._copy_packages(spec, site)
        loader = self._copy_shared_libraries(build, lib)
        for dirpath, _dirnames, filenames in os.walk(build):
            os.chmod(dirpath, 0o755)
            for name in filenames:
                full = os.path.join(dirpath, name)
                if not os.path.islink(full):
                    os.chmod(full, 0o755 if os.stat(full).st_mode & 0o111 else 0o644)
        digest = tree_digest(build)
        final = self.root / digest.split(":", 1)[1]
        if final.exists():
            shutil.rmtree(build, ignore_errors=True)
        else:
            try:
                os.rename(build, final)
            except OSError:
                shutil.rmtree(build, ignore_errors=True)  # another process won the race
        return Environment(
            name=spec.name, digest=digest, root=str(final), python=f"bin/python{minor}",
            version=info["version"], elf_interpreter=loader,
            elf_interpreter_copy=f"lib/{os.path.basename(loader)}" if loader else None,
            stdlib=stdlib_rel, site_packages=f"{stdlib_rel}/site-packages",
            packages=tuple(sorted(packages)), modules=modules)

    def _copy_packages(self, spec: EnvironmentSpec,
                       site: Path) -> tuple[list[str], dict[str, str]]:
        sources = list(spec.package_sources) or [p for p in sys.path if p.endswith(
            ("site-packages", "dist-packages")) and os.path.isdir(p)]
        packages: list[str] = []
        modules: dict[str, str] = {}
        for req in spec.packages:
            dist = _find_distribution(req, sources)
            base = Path(str(dist.locate_file("")))
            for entry in dist.files or ():
                src = Path(str(dist.locate_file(entry)))
                try:
                    rel = src.resolve().relative_to(base.resolve())
                except ValueError:
                    continue  # scripts and data outside site-packages are not part of it
                if "__pycache__" in rel.parts and not src.exists():
                    continue
                if not src.is_file():
                    continue
                target = site / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, target)
                top = rel.parts[0]
                if not top.endswith((".dist-info", ".egg-info", ".pth")) and top != "__pycache__":
                    modules[top.removesuffix(".py").split(".")[0]] = req.key
            packages.append(str(req))
        return packages, modules

    def _copy_shared_libraries(self, build: Path, lib: Path) -> str | None:
        loader: str | None = None
        needed: dict[str, str] = {}
        for dirpath, _, filenames in os.walk(build):
            for name in filenames:
                full = Path(dirpath) / name
                if full.is_symlink() or not (name.endswith(".so") or ".so." in name
                                             or full.parent.name == "bin"):
                    continue
                if not _is_elf(full):
                    continue
                libs, found_loader = _ldd(full)
                loader = loader or found_loader
                for path in libs:
                    needed.setdefault(os.path.basename(path), path)
        for name, path in sorted(needed.items()):
            target = lib / name
            if not target.exists():
                shutil.copy2(os.path.realpath(path), target)
        if loader:
            target = lib / os.path.basename(loader)
            if not target.exists():
                shutil.copy2(os.path.realpath(loader), target)
        return loader
