"""`cb-lab serve --workers 2` on loopback: two app workers behind nginx, sticky by the proxy's cookie.

Starts the command as a teacher would (`python -m engine serve`, the same entry point as
`cb-lab serve`), then checks that new visitors reach both workers, that a page's requests
stick to its worker (every test client comes from 127.0.0.1, so stickiness by address would
put all on one), and that a file upload, a separate HTTP request, reaches the worker holding
the page's session through the proxy, while the same upload sent to the other worker is
refused, which is why it must stick. Skipped with a reason when nginx is missing outside
CI; in CI (where `.ci/run` installs it) that is a failure.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from benchmarks.streamlit_client import Session
from benchmarks.uploads import put_file
from cblab.cli.workers import free_port, wait_healthy
from tests.browser_support import ROOT

NGINX = "/usr/sbin/nginx"


def require_nginx() -> None:
    if not os.path.exists(NGINX):
        if os.environ.get("CI"):
            pytest.fail(f"no nginx at {NGINX}: .ci/run must install Debian's nginx", pytrace=False)
        pytest.skip(f"Debian's nginx is not installed at {NGINX} (apt-get install nginx)", allow_module_level=True)


require_nginx()


@pytest.fixture(scope="module")
def proxy(tmp_path_factory):
    """The proxy's URL while `serve --workers 2` runs; afterwards, the command's exit status is checked."""
    port, run_dir = free_port(), tmp_path_factory.mktemp("serve")
    command = [
        sys.executable,
        "-m",
        "engine",
        "serve",
        "--workers",
        "2",
        "--port",
        str(port),
        "--run-dir",
        str(run_dir),
    ]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process, timeout=180, what="cb-lab serve")
        yield url
    finally:
        process.send_signal(signal.SIGTERM)
        output = process.communicate(timeout=60)[0].decode()
    assert process.returncode == 0, output
    assert "2 workers behind nginx" in output
    made = (run_dir / "precompute.log").read_text()  # every lesson's Compare figures, made ahead meanwhile
    lessons = [line.split(":")[0] for line in made.splitlines() if " s" in line and "WARNING" not in line]
    assert "Traceback" not in made and lessons[:1] in ([], ["part1-basic-batch"]), made
    pid = int((run_dir / "nginx.pid").read_text()) if (run_dir / "nginx.pid").exists() else None
    assert pid is None or not Path(f"/proc/{pid}").exists(), "nginx outlived cb-lab serve"


def served_by(url: str, cookie: str | None = None) -> str:
    request = urllib.request.Request(f"{url}/_stcore/health")
    if cookie:
        request.add_header("Cookie", cookie)
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.headers["X-CBL-Worker"]


def test_new_visitors_reach_both_workers_and_a_page_sticks_to_its_own(proxy):
    # Round robin alternates visitors without the cookie (a health check the proxy got late, from a
    # client that gave up waiting, may shift the turn by one: hence up to four of each).
    assert {served_by(proxy) for _ in range(4)} == {"w0", "w1"}

    async def pages_on_both() -> list[tuple[Session, str]]:
        """Pages landed one after the other (round robin gives them a worker each) until both workers hold
        one; each page's worker is checked, then the page closed, in this one event loop (its websocket's)."""
        pages: list[Session] = []
        while len(pages) < 4 and len({page.cookie("cbl_worker") for page in pages}) < 2:
            pages.append(Session(proxy, "lesson=1.1"))
            await pages[-1].land()
        seen = []
        for page in pages:
            worker = page.cookie("cbl_worker")
            assert page.session_id and not page.exceptions()
            routed = {await asyncio.to_thread(served_by, proxy, f"cbl_worker={worker}") for _ in range(5)}
            seen.append((worker, routed))
        for page in pages:
            await page.close()
        return seen

    seen = asyncio.run(pages_on_both())
    assert {worker for worker, _ in seen} == {"w0", "w1"}  # pages on both workers, all from 127.0.0.1
    for worker, routed in seen:
        assert routed == {worker}  # the cookie keeps a page's requests on its own worker
    assert served_by(proxy, "cbl_worker=w9") in ("w0", "w1")  # an unknown value is no route: round robin


def test_an_upload_through_the_proxy_reaches_the_worker_holding_the_session(proxy):
    scenario = (ROOT / "scenarios" / "part1-basic-batch.toml").read_text()
    scenario = scenario.replace('title = "Part 1: one batch', 'title = "Uploaded through the proxy: one batch', 1)

    async def upload() -> tuple[int, list[str], int]:
        page = Session(proxy, "lesson=1.1")
        await page.land()
        picker = page.elements[page.widget("scenario")].selectbox
        await page.set_value("scenario", picker.options[-1])  # "Upload a file (scenario, event log or trace)…"
        status = await page.upload("upload", "mine.toml", scenario.encode())
        headings = [m.delta.new_element.heading.body for m in page.received if m.delta.new_element.HasField("heading")]
        elsewhere = await astray(page)
        await page.close()
        return status, headings, elsewhere

    status, headings, elsewhere = asyncio.run(upload())
    assert status == 204
    assert "Uploaded through the proxy: one batch, one model call per step" in headings
    assert elsewhere == 400  # the other worker does not hold the session: stickiness is what makes uploads work


async def astray(page: Session) -> int:
    """The status of an upload for `page`'s session sent, through the proxy, to the other worker."""
    other = {"w0": "w1", "w1": "w0"}[page.cookie("cbl_worker")]
    opener = urllib.request.build_opener()
    opener.addheaders = [("Cookie", f"cbl_worker={other}; _streamlit_xsrf={page.cookie('_streamlit_xsrf')}")]
    url = f"{page.base}/_stcore/upload_file/{page.session_id}/a-file-id"
    return await asyncio.to_thread(put_file, opener, url, "x.toml", b"title = 'x'", page.cookie("_streamlit_xsrf"))
