"""Serve the app on a free localhost port and drive it with Playwright in Debian's Chromium.

Shared by the browser tests and `benchmarks/stage_playback.py`. Playwright's own browser
download does not work here, so Chromium comes from Debian (`apt-get install chromium`).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from pathlib import Path

import pytest

from cblab.cli.workers import free_port, start_worker, stop, wait_healthy

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


def require_browser():
    """At the top of a browser test module: skip it with a reason when Debian's Chromium is
    missing (outside CI; in CI, where `.ci/run` installs it, that is a failure), and return
    `playwright.sync_api`."""
    if not os.path.exists(CHROMIUM):
        if os.environ.get("CI"):
            pytest.fail(f"no browser at {CHROMIUM}: .ci/run must install Debian's chromium", pytrace=False)
        pytest.skip(
            f"Debian's Chromium is not installed at {CHROMIUM} (apt-get install chromium)", allow_module_level=True
        )
    return pytest.importorskip("playwright.sync_api")


def screenshot(page, name: str, full_page: bool = False) -> None:
    """Save the page as test-artifacts/`name`.png (look at it)."""
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=full_page)


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
def streamlit_server(timeout: float = 90.0, app: Path = ROOT / "app.py", options=()):
    """Yield the base URL of `streamlit run app.py` (or another `app`, with Streamlit's command-line
    `options`) as a `Server`, stopped on exit."""
    port = free_port()
    process = start_worker(port, options, output=subprocess.PIPE, app=app)
    url = Server(f"http://127.0.0.1:{port}")
    url.pid = process.pid
    try:
        try:
            wait_healthy(url, process, timeout)
        except RuntimeError as exc:
            output = process.stdout.read().decode(errors="replace") if process.poll() is not None else ""
            raise RuntimeError(f"{exc}: {output[-2000:]}") from None
        yield url
    finally:
        stop(process)


def launch(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)


def step_value(page) -> int:
    """The value of a Streamlit slider labelled Step (the Practice tab's)."""
    return int(page.locator("input[aria-label='Step']").get_attribute("value"))


STAGE = "[data-stage-step]"  # the stage's root, which names the step it shows


# In-page JavaScript: the stage's root element (inside the component's shadow root).
FIND_STAGE = """() => {
  for (const host of document.querySelectorAll('*')) {
    const root = host.shadowRoot && host.shadowRoot.querySelector('[data-stage-step]');
    if (root) return root;
  }
  return document.querySelector('[data-stage-step]');
}"""


def stage_eval(page, body: str):
    """`body`, a JavaScript function of the stage's root element, evaluated in the page."""
    return page.evaluate(f"() => ({body})(({FIND_STAGE})())")


def stage_step(page, index: int = 0) -> int:
    """The step the stage shows (it lives in a component frame-less shadow root; Playwright pierces it)."""
    return int(page.locator(STAGE).nth(index).get_attribute("data-stage-step"))


def wait_for_stage_step(page, value: int, timeout: float = 15.0) -> None:
    _wait_until(lambda: stage_step(page), value, "the stage's step", timeout, lambda: page.wait_for_timeout(20))


def wait_for_step(page, value: int, timeout: float = 15.0) -> None:
    _wait_until(lambda: step_value(page), value, "the step", timeout, lambda: time.sleep(0.05))


def _wait_until(read, value, what: str, timeout: float, pause) -> None:
    """Poll `read()` until it gives `value`; fail naming `what` and where it stayed."""
    deadline = time.monotonic() + timeout
    while read() != value:
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} stayed at {read()}, expected {value}")
        pause()


def open_app(page, url: str, query: str = "", ready: str = STAGE) -> None:
    """Open the app at `query` and wait until `ready` (by default the stage on the Grid tab) is shown."""
    page.goto(f"{url}/{query}")
    page.wait_for_selector(ready, timeout=60_000)
    wait_until_idle(page)


def wait_until_idle(page, timeout: float = 30.0) -> None:
    """Until Streamlit's 'running' indicator has gone: clicks during a rerun can be lost."""
    page.wait_for_timeout(300)
    page.wait_for_selector("[data-testid='stStatusWidget']", state="hidden", timeout=timeout * 1000)


def check_answer(page, option: str | None = None, number: int | None = None) -> None:
    """Answer the prediction on screen (a radio option or a number) and press Check prediction."""
    if option is not None:
        page.get_by_role("radiogroup", name="Your answer").get_by_text(option, exact=True).click()
    else:
        box = page.get_by_placeholder("a number")
        box.fill(str(number))
        box.press("Enter")
    wait_until_idle(page)
    page.get_by_role("button", name="Check prediction").click()
    wait_until_idle(page)


def wait_for_url(page, fragment: str, present: bool = True, timeout: float = 15.0) -> None:
    """The page URL (which Streamlit updates after a rerun) gains or loses `fragment`."""
    deadline = time.monotonic() + timeout
    while (fragment in page.url) != present:
        if time.monotonic() > deadline:
            raise AssertionError(f"URL {page.url} {'lacks' if present else 'still has'} {fragment!r}")
        page.wait_for_timeout(50)  # (not time.sleep: Playwright delivers the page's URL changes while it waits)
