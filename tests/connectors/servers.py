"""Real tracing servers for the connector tests and the bench: `phoenix serve` and `mlflow
server`, each from a virtualenv of its own (arize-phoenix pins anthropic<2, which our 2.14
breaks; full mlflow pins pyarrow<26, which ours is not), on free local ports, SQLite in a
temporary folder. Owns making those virtualenvs once (.venv-phoenix/, .venv-mlflow/,
gitignored; .ci/run makes them first), starting a server, waiting until it answers, stopping
it, and sending it the producers' real traffic (tests/connectors/send.py).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VENVS = {  # server kind -> (virtualenv, what pip installs into it, the command it runs)
    "phoenix": (ROOT / ".venv-phoenix", "arize-phoenix>=12,<21", "phoenix"),
    "mlflow": (ROOT / ".venv-mlflow", "mlflow>=3.4,<4", "mlflow"),
}
READY_PATHS = {"phoenix": "/healthz", "mlflow": "/health"}
START_TIMEOUT = 180  # seconds: a first start runs the database migrations on a busy machine


class ServerUnavailable(RuntimeError):
    """The server's virtualenv cannot be made here (no package index): tests skip with this."""


def server_venv(kind: str) -> Path:
    """The server's command in its virtualenv, made (once, under a lock) when absent."""
    venv, requirement, command = VENVS[kind]
    executable = venv / "bin" / command
    with open(ROOT / f".{kind}-venv.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # xdist workers wait for the one that installs
        if not executable.exists():
            _install(venv, requirement)
    if not executable.exists():
        raise ServerUnavailable(f"{requirement} did not install a `{command}` command in {venv}")
    return executable


def _install(venv: Path, requirement: str) -> None:
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [*_installer(venv), "--quiet", requirement],
            check=True,
            capture_output=True,
            text=True,
            timeout=1800,
        )
    except (subprocess.SubprocessError, OSError) as exc:
        detail = getattr(exc, "stderr", "") or ""
        raise ServerUnavailable(
            f"cannot install {requirement} into {venv}: {exc} {detail[-500:]}"
        ) from exc


def _installer(venv: Path) -> list[str]:
    """The project's uv (`make install` puts it in .venv; 20 s for Phoenix where pip took
    minutes), else the server venv's own pip."""
    uv = ROOT / ".venv" / "bin" / "uv"
    if uv.exists():
        # with bytecode: uv writes none by default, and the server imports hundreds of modules
        return [
            str(uv),
            "pip",
            "install",
            "--compile-bytecode",
            "--python",
            str(venv / "bin" / "python"),
        ]
    return [str(venv / "bin" / "python"), "-m", "pip", "install"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _command(
    kind: str, executable: Path, port: int, folder: Path
) -> tuple[list[str], dict[str, str]]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("PHOENIX_", "MLFLOW_", "OTEL_"))
    }
    if kind == "phoenix":
        env.update(
            PHOENIX_WORKING_DIR=str(folder),
            PHOENIX_HOST="127.0.0.1",
            PHOENIX_PORT=str(port),
            PHOENIX_GRPC_PORT=str(free_port()),
            PHOENIX_TELEMETRY_ENABLED="false",
        )
        return [str(executable), "serve"], env
    env["MLFLOW_DISABLE_TELEMETRY"] = "true"
    return [
        str(executable), "server", "--host", "127.0.0.1", "--port", str(port),
        "--backend-store-uri", f"sqlite:///{folder / 'mlflow.db'}",
        "--default-artifact-root", str(folder / "artifacts"), "--workers", "1",
    ], env  # fmt: skip


@contextmanager
def running_server(kind: str, folder: Path) -> Iterator[str]:
    """A started server's URL; stopped (its process group killed) on the way out."""
    executable = server_venv(kind)
    port = free_port()
    command, env = _command(kind, executable, port, folder)
    url = f"http://127.0.0.1:{port}"
    with open(folder / f"{kind}.log", "wb") as log:
        process = subprocess.Popen(
            command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            _wait_ready(url + READY_PATHS[kind], process, folder / f"{kind}.log")
            yield url
        finally:
            _stop(process)


def _wait_ready(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"{url} exited with {process.returncode}:\n{log.read_text()[-3000:]}"
            )
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"{url} did not answer in {START_TIMEOUT} s:\n{log.read_text()[-3000:]}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    """The server and everything it started (MLflow's job consumers outlive a SIGTERM)."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=20)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def send_traffic(kind: str, url: str, name: str, rounds: int = 1, kinds: str = "") -> None:
    """The producers' traffic (every kind, or the comma-separated `kinds`), `rounds` times,
    sent to the server for real."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "MLFLOW_", "ANTHROPIC_"))
    }
    done = subprocess.run(
        [sys.executable, "-m", "tests.connectors.send", kind, url, name, str(rounds), *([kinds] if kinds else [])],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"sending traffic to {url} failed:\n{done.stdout}\n{done.stderr}")


if __name__ == "__main__":  # .ci/run: make the servers' virtualenvs (all, or those named)
    for name in sys.argv[1:] or VENVS:
        try:
            print(server_venv(name))
        except ServerUnavailable as exc:  # the tests then skip, with this reason
            print(f"{name}: {exc}", file=sys.stderr)
