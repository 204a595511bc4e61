"""A private redis-server for the tests and the load benchmark: Debian's binary, on a free
loopback port, in a folder of its own, with its append-only file on.

    with LocalRedis(folder) as server:      # started; stopped (killed) on exit
        store = open_store(server.url)
        server.restart()                    # kill -9, then start again on the same file

`appendfsync` is "always" by default: Redis writes and fsyncs each change before it answers,
so a turn the server acknowledged survives a crash of Redis or of the machine. "everysec" would
fsync once a second: still whole after a Redis crash, but up to a second of turns lost with the
machine.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType

import redis

START_TIMEOUT_SECONDS = 20.0


def redis_server_binary() -> str | None:
    return shutil.which("redis-server") or (
        "/usr/bin/redis-server" if Path("/usr/bin/redis-server").exists() else None
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class LocalRedis:
    def __init__(self, folder: Path, appendfsync: str = "always", port: int | None = None) -> None:
        binary = redis_server_binary()
        if binary is None:
            raise FileNotFoundError(
                "redis-server is not installed (Debian: apt-get install redis-server; "
                "`make redis-deps` does it)"
            )
        self.binary = binary
        self.folder = Path(folder)
        self.appendfsync = appendfsync
        self.port = port or free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        command = [
            self.binary,
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--dir", str(self.folder),
            "--appendonly", "yes",
            "--appendfsync", self.appendfsync,
            "--save", "",  # the append-only file only, no snapshots
            "--logfile", str(self.folder / "redis.log"),
        ]  # fmt: skip
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL)
        self._wait_until_up()

    def _wait_until_up(self) -> None:
        client = redis.Redis(port=self.port, socket_connect_timeout=0.5)
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        try:
            while time.monotonic() < deadline:
                if self.process is not None and self.process.poll() is not None:
                    raise RuntimeError(f"redis-server exited: see {self.folder / 'redis.log'}")
                try:
                    if client.ping():
                        return
                except redis.exceptions.RedisError:  # not listening yet, or loading its file
                    time.sleep(0.05)
        finally:
            client.close()
        raise RuntimeError(f"redis-server did not answer in {START_TIMEOUT_SECONDS:g} s")

    def kill(self) -> None:
        """kill -9: what a crash looks like to the clients and to the append-only file."""
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None

    def restart(self) -> float:
        """Kill, then start on the same port and folder; returns the seconds it was away."""
        began = time.monotonic()
        self.kill()
        self.start()
        return time.monotonic() - began

    def __enter__(self) -> LocalRedis:
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.kill()
