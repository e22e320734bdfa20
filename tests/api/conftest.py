"""A real `formulane serve` (uvicorn, loopback, a free port) for the HTTP tests, with keys for
two tenants made by the `formulane keys create` command."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator

import httpx
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

SRC = str(Path(__file__).resolve().parents[2] / "src")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def env(**extra: str) -> dict[str, str]:
    out = dict(os.environ)
    out["PYTHONPATH"] = SRC + os.pathsep + out.get("PYTHONPATH", "")
    for name in [k for k in out if k.startswith("FORMULANE_") and k != "FORMULANE_TEST_POSTGRES_URL"]:
        del out[name]
    out.update(extra)
    return out


def make_key(data_dir: Path, tenant: str, *scopes: str, database_url: str | None = None) -> str:
    cmd = [sys.executable, "-m", "formulane", "keys", "create", "--tenant", tenant,
           "--data-dir", str(data_dir)]
    if database_url:
        cmd += ["--database-url", database_url]
    if scopes:
        cmd += ["--scopes", *scopes]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env(), timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


class Server:
    def __init__(self, data_dir: Path, *, extra_env: dict[str, str] | None = None,
                 args: tuple[str, ...] = ()) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = data_dir / f"serve-{self.port}.log"
        self._log = open(self.log, "w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "formulane", "serve", "--data-dir", str(data_dir),
             "--port", str(self.port), *args],
            stdout=self._log, stderr=subprocess.STDOUT, env=env(**(extra_env or {})))
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(self.base + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("server did not start:\n" + self.log.read_text())
            time.sleep(0.1)

    def output(self) -> str:
        self._log.flush()
        return self.log.read_text()

    def stop(self, kill: bool = False) -> None:
        if self.proc.poll() is None:
            if kill:
                self.proc.kill()
            else:
                self.proc.terminate()
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._log.close()


def sandbox_dir(prefix: str) -> Path:
    """A data directory the sandbox's job uids can traverse (pytest's own tmp is 0700)."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    path.chmod(0o711)
    return path


def remove_dir(path: Path) -> None:
    """Remove a data dir; a server killed with SIGKILL leaves its spare sandbox's tmpfs
    mounted (it had no chance to clean up), so unmount what is left under it first."""
    mounts = [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()]
    for mount in sorted((m for m in mounts if m.startswith(str(path) + "/")), reverse=True):
        subprocess.run(["umount", mount], capture_output=True, check=False)
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def data_dir() -> Iterator[Path]:
    path = sandbox_dir("formulane-serve-")
    yield path
    remove_dir(path)


@pytest.fixture(scope="session")
def server(data_dir: Path) -> Iterator[Server]:
    srv = Server(data_dir, extra_env={"FORMULANE_RATE_BURST": "100000",
                                      "FORMULANE_RATE_PER_S": "100000"})
    yield srv
    srv.stop()


@pytest.fixture(scope="session")
def keys(server: Server, data_dir: Path) -> dict[str, str]:
    return {"a": make_key(data_dir, "acme"), "b": make_key(data_dir, "globex"),
            "a_read": make_key(data_dir, "acme", "formulas:read")}


def client(server: Server, key: str | None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.Client(base_url=server.base, headers=headers, timeout=60)


@pytest.fixture(scope="session")
def a(server: Server, keys: dict[str, str]) -> Iterator[httpx.Client]:
    with client(server, keys["a"]) as c:
        yield c


@pytest.fixture(scope="session")
def b(server: Server, keys: dict[str, str]) -> Iterator[httpx.Client]:
    with client(server, keys["b"]) as c:
        yield c
