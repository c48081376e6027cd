"""An OpenAI-compatible vLLM server on the spyre platform, in a subprocess on 127.0.0.1: started,
waited for and stopped within time limits (the demo and the tests; docs/vllm.md, "Serving").

`Server(model, args, log)` runs `python -m spyre_mlir.vllm serve MODEL --host 127.0.0.1 --port
PORT *args` in its own process group with its output in the file `log`; as a context manager it
waits until the server answers /health and, on the way out, stops it with SIGINT (vLLM's clean
shutdown), then SIGKILLs the group if it is still there after `stop_timeout` seconds."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import IO


class ServerError(RuntimeError):
    """The server exited or did not answer in time; the message ends with its log's last lines."""


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (the OS's choice)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    def __init__(
        self,
        model: str | Path,
        args: Sequence[str] = (),
        log: str | Path = "vllm-serve.log",
        env: dict[str, str] | None = None,
        start_timeout: float = 300.0,
        stop_timeout: float = 60.0,
    ) -> None:
        self.model = str(model)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = Path(log)
        self.command = [
            sys.executable,
            "-m",
            "spyre_mlir.vllm",
            "serve",
            self.model,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            *args,
        ]
        self.env = {**os.environ, **(env or {})}
        self.start_timeout = start_timeout
        self.stop_timeout = stop_timeout
        self.process: subprocess.Popen[bytes] | None = None
        self.left_behind = False
        """Whether processes of the server's group were still running after it exited (then killed)."""
        self._log: IO[bytes] | None = None

    def log(self) -> str:
        """The server's output so far."""
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def _tail(self, lines: int = 30) -> str:
        return "\n".join(self.log().splitlines()[-lines:])

    def start(self) -> None:
        """Start the server and wait until /health answers 200; `ServerError` if it exits first
        or `start_timeout` passes (the server is stopped then)."""
        self._log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            self.command, stdout=self._log, stderr=subprocess.STDOUT, env=self.env, start_new_session=True
        )
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ServerError(f"vllm serve exited with {self.process.returncode}:\n{self._tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=5) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(1.0)
        self.stop()
        raise ServerError(f"vllm serve did not answer /health within {self.start_timeout:.0f} s:\n{self._tail()}")

    def stop(self) -> int:
        """SIGINT, as Ctrl-C: vLLM shuts its engine and workers down. The process's exit code; if
        it has not exited within `stop_timeout` seconds, its whole process group is killed and
        `ServerError` raised."""
        p = self.process
        if p is None:
            return 0
        try:
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
                try:
                    p.wait(timeout=self.stop_timeout)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait(timeout=30)
                    raise ServerError(
                        f"vllm serve did not stop within {self.stop_timeout:.0f} s of SIGINT (killed)"
                    ) from None
            return p.returncode
        finally:
            self.left_behind = self._reap_group(p.pid)
            if self._log is not None:
                self._log.close()

    @staticmethod
    def _reap_group(pgid: int, grace: float = 10.0) -> bool:
        """Whether processes of the group were still running `grace` seconds after its leader
        exited (vLLM's engine and workers exit after it); those are killed."""
        deadline = time.monotonic() + grace
        while True:
            try:
                os.killpg(pgid, 0)
            except ProcessLookupError:
                return False
            if time.monotonic() > deadline:
                break
            time.sleep(0.2)
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            return False
        return True

    def __enter__(self) -> Server:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()
