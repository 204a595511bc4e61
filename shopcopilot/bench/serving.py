"""`shopcopilot serve` as a child process, for the load benchmark and the fault tests.

    with ServedCopilot(["--workers", "2", "--session-store", url], env=env) as server:
        server.base_url, server.worker_pids()
        server.kill_worker(pid)         # kill -9 one worker; uvicorn starts another

Worker pids come from the X-Worker header every response carries.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType

import httpx

from .local_redis import free_port

START_TIMEOUT_SECONDS = 300.0  # the first start may build the embedded catalog's index


class ServedCopilot:
    def __init__(
        self,
        arguments: list[str],
        log_path: Path,
        env: dict[str, str] | None = None,
        workers: int = 1,
    ) -> None:
        self.port = free_port()
        self.workers = workers
        self.command = [
            sys.executable, "-m", "shopcopilot", "serve", "--no-browser",
            "--port", str(self.port), "--workers", str(workers), *arguments,
        ]  # fmt: skip
        self.log_path = log_path
        self.env = {**os.environ, **(env or {})}
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def start(self) -> None:
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                self.command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self.env,
                start_new_session=True,  # its own process group: stopped together
            )
        self.wait_for_workers(self.workers, START_TIMEOUT_SECONDS)

    def worker_pids(self, probes: int = 200) -> set[int]:
        """The workers that answer health checks on fresh connections (each probe may reach
        any of them)."""
        seen = set()
        for _ in range(probes):
            pid = self._probe()
            if pid is not None:
                seen.add(pid)
            if len(seen) >= self.workers:
                break
        return seen

    def wait_for_workers(self, count: int, timeout: float, avoid: frozenset[int] = frozenset()):
        """Until `count` workers (none of `avoid`) have answered; returns their pids."""
        deadline = time.monotonic() + timeout
        seen: set[int] = set()
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"serve exited with {self.process.returncode}: {self.log_path}")
            pid = self._probe()
            if pid is not None and pid not in avoid:
                seen.add(pid)
                if len(seen) >= count:
                    return seen
            elif pid is None:
                time.sleep(0.1)
        raise RuntimeError(f"{count} workers did not answer in {timeout:g} s: {self.log_path}")

    def _probe(self) -> int | None:
        try:
            response = httpx.get(f"{self.base_url}/api/health", timeout=5.0)
        except httpx.TransportError:
            return None
        if response.status_code != 200:
            return None
        return int(response.headers["x-worker"])

    def kill_worker(self, pid: int) -> None:
        """kill -9 a worker of this server (a pid its responses named)."""
        os.kill(pid, signal.SIGKILL)

    def stop(self) -> None:
        if self.process is None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        except ProcessLookupError:
            pass
        self.process = None

    def __enter__(self) -> ServedCopilot:
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()
