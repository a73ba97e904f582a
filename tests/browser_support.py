"""Serve the app on a free localhost port and drive it with Playwright in Debian's Chromium.

Shared by the browser tests and `benchmarks/browser_latency.py`. Playwright's own browser
download does not work here, so Chromium comes from Debian (`apt-get install chromium`).
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = ROOT / "test-artifacts"
VIEWPORT = {"width": 1400, "height": 1000}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server(str):
    """The base URL of a running app server; `pid` is its process, to read its memory from /proc."""

    pid: int

    def peak_resident_bytes(self) -> int:
        """The server's peak resident set size so far (VmHWM)."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
        raise RuntimeError("no VmHWM in /proc status")


@contextlib.contextmanager
def streamlit_server(timeout: float = 90.0):
    """Yield the base URL of `streamlit run app.py` (a `Server`), stopped on exit."""
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            str(ROOT / "app.py"),
            "--server.headless",
            "true",
            "--server.port",
            str(port),
            "--server.address",
            "127.0.0.1",
            "--browser.gatherUsageStats",
            "false",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    url = Server(f"http://127.0.0.1:{port}")
    url.pid = process.pid
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                    if response.read() == b"ok":
                        break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                output = process.stdout.read().decode(errors="replace") if process.poll() is not None else ""
                raise RuntimeError(f"streamlit did not become healthy on {url}: {output[-2000:]}")
            time.sleep(0.3)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


def launch(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)


def step_value(page) -> int:
    return int(page.locator("input[aria-label='Step']").get_attribute("value"))


def wait_for_step(page, value: int, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while step_value(page) != value:
        if time.monotonic() > deadline:
            raise AssertionError(f"step stayed at {step_value(page)}, expected {value}")
        time.sleep(0.05)


def open_app(page, url: str, query: str = "") -> None:
    page.goto(f"{url}/{query}")
    page.wait_for_selector(".js-plotly-plot", timeout=60_000)
    page.wait_for_selector("input[aria-label='Step']", timeout=60_000)
    wait_until_idle(page)


def wait_until_idle(page, timeout: float = 30.0) -> None:
    """Until Streamlit's 'running' indicator has gone: clicks during a rerun can be lost."""
    page.wait_for_timeout(300)
    page.wait_for_selector("[data-testid='stStatusWidget']", state="hidden", timeout=timeout * 1000)


def wait_for_url(page, fragment: str, present: bool = True, timeout: float = 15.0) -> None:
    """The page URL (which Streamlit updates after a rerun) gains or loses `fragment`."""
    deadline = time.monotonic() + timeout
    while (fragment in page.url) != present:
        if time.monotonic() > deadline:
            raise AssertionError(f"URL {page.url} {'lacks' if present else 'still has'} {fragment!r}")
        time.sleep(0.05)
