"""App servers as child processes: `streamlit run app.py` on a loopback port, started, awaited, stopped.

Shared by `cb-lab serve` (the workers behind the proxy), the browser tests
(`tests/browser_support.py`) and the benchmarks. A worker listens on 127.0.0.1 only, runs
headless, and watches no files (a source edit must not prompt a class to rerun). `options`
are Streamlit's own command-line settings, e.g. `--runner.postScriptGC false`.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


def installed_or_checkout_app() -> Path:
    """The app's entry: an installed wheel's copy (cblab/entry/app.py: pyproject.toml's package `cblab.entry`),
    else the checkout's app.py (which an editable install runs too)."""
    package = Path(__file__).resolve().parents[1]
    installed = package / "entry" / "app.py"
    return installed if installed.is_file() else package.parent / "app.py"


APP = installed_or_checkout_app()
# The warm starter of the served tree: this tree's, or an older one's from before cli/ moved into cblab/
# (a benchmark's --app may serve either); a tree older still has none and runs plain `streamlit`.
STARTERS = ("cblab/cli/worker_start.py", "cli/worker_start.py")


def free_port() -> int:
    """A TCP port free on loopback now (the OS picks it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_worker(
    port: int, options=(), env: dict[str, str] | None = None, output=subprocess.DEVNULL, app: Path = APP
) -> subprocess.Popen:
    """Start `streamlit run app` on 127.0.0.1:`port`, warmed first (`cblab/cli/worker_start.py`); its
    output goes to `output` (a file, or a pipe)."""
    if not app.exists():
        raise OSError(f"{app} not found: neither an installed Continuous Batching Lab nor a checkout's")
    found = next((path for path in STARTERS if (app.parent / path).exists()), None)
    starter = found.removesuffix(".py").replace("/", ".") if found else "streamlit"
    command = [sys.executable, "-m", starter, "run", str(app)]
    command += ["--server.headless", "true", "--server.port", str(port), "--server.address", "127.0.0.1"]
    command += ["--server.fileWatcherType", "none", *options]
    return subprocess.Popen(
        command, cwd=app.parent, env={**os.environ, **(env or {})}, stdout=output, stderr=subprocess.STDOUT
    )


def wait_healthy(url: str, process: subprocess.Popen, timeout: float = 90.0, what: str = "streamlit") -> None:
    """Until `url`/_stcore/health answers ok; RuntimeError if `process` exits first or `timeout` passes."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.read() == b"ok":
                    return
        except OSError:
            pass
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with status {process.returncode} before {url} was healthy")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} was not healthy on {url} after {timeout:g} s")
        time.sleep(0.3)


def stop(process: subprocess.Popen, grace: float = 10.0) -> None:
    """SIGTERM, then SIGKILL after `grace` seconds."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
