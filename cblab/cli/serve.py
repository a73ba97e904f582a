"""`cb-lab serve --workers N`: N app workers behind nginx on one port, for a class past one process.

    cb-lab serve --workers 2 [--port 8501] [--address 127.0.0.1] [--run-cache DIR]
                 [--run-dir DIR] [-- STREAMLIT OPTIONS...]

Starts N `streamlit run app.py` workers on free loopback ports, waits until each is healthy,
then Debian's nginx in front on `--address`:`--port` (loopback by default; `--address
0.0.0.0` opens it to the room's network), with the configuration of `cblab/cli/nginx_config.py`:
sticky sessions by a cookie the proxy sets, never by client address. Stops everything on
Ctrl-C or SIGTERM, or as soon as any worker or nginx exits (status 1).

Every worker gets the same environment: `CBL_RUN_CACHE` (`--run-cache DIR`, or inherited)
names the folder of runs kept on disk, which the workers share; and one
`STREAMLIT_SERVER_COOKIE_SECRET`, generated per start, so a cookie Streamlit signs on one
worker reads on another. The run folder (by default a new temporary folder, removed at the
end) holds nginx's configuration, pid file and logs and each worker's log (`worker-<i>.log`).
Arguments after `--` go to every `streamlit run` (e.g. `-- --runner.postScriptGC false`).
Once the workers answer, every built-in lesson's Compare figures are made into that shared
folder at the lowest CPU priority (`cblab/ui/frame/precompute.py`, logged to `precompute.log` in
the run folder), so the first learner to open Compare on a heavy lesson does not wait for it.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from cblab.cli.nginx_config import TEMP_PATHS, nginx_config
from cblab.cli.workers import APP, free_port, start_worker, stop, wait_healthy

NGINX = "/usr/sbin/nginx"
MAX_WORKERS = 16
PRECOMPUTE = [sys.executable, "-m", "cblab.ui.frame.precompute"]  # every lesson's Compare figures, made ahead


@dataclasses.dataclass
class Deployment:
    url: str  # the proxy's base URL
    workers: list[subprocess.Popen]
    worker_urls: list[str]
    proxy: subprocess.Popen
    run_dir: Path

    def exited(self) -> str | None:
        """Which process has exited, if any ("worker 1", "nginx")."""
        for i, worker in enumerate(self.workers):
            if worker.poll() is not None:
                return f"worker {i}"
        return "nginx" if self.proxy.poll() is not None else None


def nginx_binary() -> str:
    found = shutil.which("nginx") or (NGINX if os.path.exists(NGINX) else None)
    if found is None:
        raise OSError("nginx is not installed (apt-get install nginx): cb-lab serve puts it in front of the workers")
    return found


@contextlib.contextmanager
def serving(
    workers: int,
    port: int,
    address: str = "127.0.0.1",
    options=(),
    env: dict[str, str] | None = None,
    run_dir: Path | None = None,
    timeout: float = 120.0,
    app: Path = APP,
    precompute: bool = False,
) -> Iterator[Deployment]:
    """`workers` app workers and nginx in front on `address`:`port`, stopped and cleaned up on exit;
    with `precompute`, the built-in lessons' Compare figures are made meanwhile (`PRECOMPUTE`)."""
    if not 1 <= workers <= MAX_WORKERS:
        raise ValueError(f"--workers: must be 1 to {MAX_WORKERS}, got {workers}")
    binary = nginx_binary()
    own_dir = run_dir is None
    run_dir = Path(tempfile.mkdtemp(prefix="cb-lab-serve-") if own_dir else run_dir).resolve()
    run_dir.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:  # nginx's worker process then runs as nobody, and must reach its temp folders
        run_dir.chmod(0o755)
    env = {"STREAMLIT_SERVER_COOKIE_SECRET": secrets.token_hex(32), **(env or {})}
    ports = [free_port() for _ in range(workers)]
    started: list[subprocess.Popen] = []
    proxy = ahead = None
    try:
        for i, worker_port in enumerate(ports):
            with open(run_dir / f"worker-{i}.log", "ab") as log:
                started.append(start_worker(worker_port, options, env, output=log, app=app))
        urls = [f"http://127.0.0.1:{p}" for p in ports]
        for i, (worker, url) in enumerate(zip(started, urls)):
            wait_healthy(url, worker, timeout, what=f"worker {i} (log: {run_dir / f'worker-{i}.log'})")
        for kind in TEMP_PATHS:
            (run_dir / kind).mkdir(exist_ok=True)
        config = run_dir / "nginx.conf"
        config.write_text(nginx_config(run_dir, address, port, ports))
        with open(run_dir / "nginx.out", "ab") as log:
            proxy = subprocess.Popen(
                [binary, "-p", str(run_dir), "-c", str(config)], stdout=log, stderr=subprocess.STDOUT
            )
        host = f"[{address}]" if ":" in address else address
        url = f"http://{'127.0.0.1' if address in ('0.0.0.0', '::') else host}:{port}"
        wait_healthy(url, proxy, timeout, what=f"nginx (log: {run_dir / 'error.log'})")
        if precompute:
            with open(run_dir / "precompute.log", "ab") as log:
                ahead = subprocess.Popen(
                    PRECOMPUTE, cwd=app.parent, env={**os.environ, **env}, stdout=log, stderr=subprocess.STDOUT
                )
        yield Deployment(url, started, urls, proxy, run_dir)
    finally:
        if ahead is not None:
            stop(ahead)
        if proxy is not None:
            stop(proxy)
        for worker in started:
            stop(worker)
        if own_dir:
            shutil.rmtree(run_dir, ignore_errors=True)


def add_serve_parser(commands) -> None:
    serve = commands.add_parser(
        "serve",
        help="run N app workers behind nginx on one port (sticky sessions by cookie)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    serve.add_argument("--workers", type=int, default=2, help=f"app workers, 1 to {MAX_WORKERS} (default 2)")
    serve.add_argument("--port", type=port_number, default=8501, help="the proxy's port (default 8501)")
    serve.add_argument("--address", default="127.0.0.1", help="the proxy's address (default 127.0.0.1)")
    serve.add_argument("--run-cache", metavar="DIR", help="the runs cache folder the workers share (CBL_RUN_CACHE)")
    serve.add_argument("--run-dir", metavar="DIR", help="keep nginx's config, pid file and logs here")
    serve.add_argument("streamlit_options", nargs=argparse.REMAINDER, help="after --: options for streamlit run")


def port_number(text: str) -> int:
    port = int(text)
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"must be 1 to 65535, got {port}")
    return port


def serve_command(args: argparse.Namespace) -> int:
    options = [o for o in args.streamlit_options if o != "--"]
    env = {"CBL_RUN_CACHE": str(Path(args.run_cache).resolve())} if args.run_cache else None
    run_dir = Path(args.run_dir) if args.run_dir else None
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append("SIGTERM"))
    try:
        with serving(args.workers, args.port, args.address, options, env, run_dir, precompute=True) as deployment:
            print(f"Continuous Batching Lab: {deployment.url} ({args.workers} workers behind nginx)", flush=True)
            for i, url in enumerate(deployment.worker_urls):
                print(f"  worker {i}: {url} (w{i})", flush=True)
            print(f"  nginx config and logs: {deployment.run_dir}", flush=True)
            while not stopping:
                gone = deployment.exited()
                if gone is not None:
                    print(f"error: {gone} exited; stopping", flush=True)
                    return 1
                time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    except RuntimeError as exc:  # a worker or nginx did not start: its log is named
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0
