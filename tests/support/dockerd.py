"""A real, private dockerd for tests: its own socket, data and exec roots under a temp dir.

    with DockerDaemon(tmp_path) as daemon:      # or start()/stop()
        client = daemon.client()
        client.images.load(open(archive, "rb").read())

Started with the vfs storage driver and no networking (no bridge, no iptables) so
it touches nothing on the host; stopped by PID (TERM, wait, then KILL).
``DaemonUnavailable`` carries the reason and the end of dockerd's log when it
cannot start (not root, no binary, cgroup trouble...), for ``pytest.skip``.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

START_TIMEOUT = 30.0
STOP_TIMEOUT = 15.0


class DaemonUnavailable(RuntimeError):
    pass


class DockerDaemon:
    def __init__(self, root: str | os.PathLike) -> None:
        # unix socket paths are limited to ~107 bytes: keep the root short.
        self.root = Path(root)
        self.socket = self.root / "docker.sock"
        self.url = f"unix://{self.socket}"
        self.log = self.root / "dockerd.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> "DockerDaemon":
        binary = shutil.which("dockerd")
        if binary is None:
            raise DaemonUnavailable("dockerd is not installed (apt-get install docker.io)")
        if os.geteuid() != 0:
            raise DaemonUnavailable("dockerd needs root")
        if len(str(self.socket)) > 100:
            raise DaemonUnavailable(f"socket path too long for a unix socket: {self.socket}")
        self.root.mkdir(parents=True, exist_ok=True)
        cmd = [
            binary,
            "--storage-driver=vfs",
            "--iptables=false",
            "--ip6tables=false",
            "--bridge=none",
            f"--host={self.url}",
            f"--data-root={self.root / 'data'}",
            f"--exec-root={self.root / 'exec'}",
            f"--pidfile={self.root / 'docker.pid'}",
        ]
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise DaemonUnavailable(f"dockerd exited with {self.proc.returncode}: {self.log_tail()}")
            if self.socket.exists() and self._ping():
                return self
            time.sleep(0.05)
        self.stop()
        raise DaemonUnavailable(f"dockerd did not answer within {START_TIMEOUT}s: {self.log_tail()}")

    def _ping(self) -> bool:
        import docker

        try:
            client = docker.DockerClient(base_url=self.url, version="auto", timeout=2)
        except docker.errors.DockerException:
            return False
        try:
            return bool(client.ping())
        except Exception:
            return False
        finally:
            client.close()

    def client(self):  # type: ignore[no-untyped-def]
        import docker

        return docker.DockerClient(base_url=self.url, version="auto", timeout=30)

    def log_tail(self, lines: int = 8) -> str:
        try:
            text = self.log.read_text(errors="replace").strip().splitlines()
        except OSError:
            return "(no log)"
        return " | ".join(text[-lines:])

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            containerd_pid = self._containerd_pid()  # read before KILL: dockerd removes it when it stops cleanly
            proc.kill()
            proc.wait(5)
            if containerd_pid:  # dockerd's own containerd would be orphaned by a KILL
                try:
                    os.kill(containerd_pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def _containerd_pid(self) -> int | None:
        try:
            return int((self.root / "exec" / "containerd" / "containerd.pid").read_text().strip())
        except (OSError, ValueError):
            return None

    def __enter__(self) -> "DockerDaemon":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def remove_root(root: str | os.PathLike) -> None:
    """Delete a stopped daemon's directory (vfs copies of every layer live there)."""
    shutil.rmtree(root, ignore_errors=True)
