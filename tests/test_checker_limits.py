"""The checker's worker: resource limits, its own process group, and no process left behind."""

import json
import os
import signal
import subprocess
import sys
import time
import uuid

import pytest

from engine.practice.checker.cases import fixed_cases
from engine.practice.checker.processes import group_members
from engine.practice.checker.resources import ADDRESS_SPACE_BYTES, CPU_LIFETIME_SECONDS, FILE_SIZE_BYTES, PROCESSES
from engine.practice.checker.run import check
from engine.practice.checker.sandbox import Solution

SOLUTIONS = "tests/solutions"
FIRST_CASE = fixed_cases()[0].to_json()


def marked(pattern: str) -> list[str]:
    """The pids of live processes whose command line matches `pattern`."""
    found = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout.split()
    return [pid for pid in found if int(pid) != os.getpid()]


def eventually(condition, seconds: float = 10.0) -> bool:
    """Whether `condition()` holds within `seconds` (a bound on termination, not a speed test)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


@pytest.fixture
def marker(monkeypatch):
    """A unique word the solution puts on the command line of the processes it starts."""
    word = f"leftover-{uuid.uuid4().hex}"
    monkeypatch.setenv("LEFTOVER_MARKER", word)
    yield word
    for pid in marked(word):  # a failing test must not leave sleepers behind either
        os.kill(int(pid), signal.SIGKILL)


# -- limits ------------------------------------------------------------------------------------
def test_the_worker_runs_alone_under_the_documented_limits(tmp_path, monkeypatch):
    monkeypatch.setenv("LIMITS_REPORT", str(tmp_path / "report.json"))
    solution = Solution(f"{SOLUTIONS}/reports_its_limits.py", None)
    solution.close()
    report = json.loads((tmp_path / "report.json").read_text())
    limits = report.pop("limits")
    cpu_soft, cpu_hard = limits.pop("RLIMIT_CPU")
    assert limits == {
        "RLIMIT_AS": [ADDRESS_SPACE_BYTES] * 2,
        "RLIMIT_FSIZE": [FILE_SIZE_BYTES] * 2,
        "RLIMIT_CORE": [0, 0],
        "RLIMIT_NPROC": [PROCESSES] * 2,
    }
    assert (ADDRESS_SPACE_BYTES, FILE_SIZE_BYTES, PROCESSES, CPU_LIFETIME_SECONDS) == (1 << 30, 16 << 20, 256, 3600)
    assert cpu_hard == 3600 and 11 <= cpu_soft <= 13  # ceil(CPU used so far, under 2 s, + 10 s to load) + 1 s
    assert report == {
        "sigxfsz ignored": True,
        "fds 0-2": ["/dev/null"] * 3,
        "protocol inheritable": [False, False],
        "own group and session": True,
        "threads": {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"},
    }


def test_allocating_too_much_is_a_memory_error_in_every_case():
    report = check(f"{SOLUTIONS}/allocates_too_much.py")
    assert report.exit_status == 1
    assert len(report.failed) == len(fixed_cases())
    for result in report.results:
        assert [f.check for f in result.findings] == ["runs"]
        assert result.findings[0].message.splitlines()[-1] == "MemoryError"


def test_writing_a_file_past_the_size_limit_fails_the_case(tmp_path, monkeypatch):
    monkeypatch.setenv("BIG_FILE", str(tmp_path / "big.bin"))
    solution = Solution(f"{SOLUTIONS}/writes_a_big_file.py", None)
    try:
        trace = solution.run(FIRST_CASE)
    finally:
        solution.close()
    assert trace.error.splitlines()[-1] == "OSError: [Errno 27] File too large"
    assert (tmp_path / "big.bin").stat().st_size == FILE_SIZE_BYTES


def test_the_cpu_budget_ends_a_busy_process_with_sigxcpu():
    code = "from engine.practice.checker.resources import set_cpu_budget\nset_cpu_budget(0.1)\nwhile True:\n    pass\n"
    result = subprocess.run([sys.executable, "-c", code], timeout=60)
    assert result.returncode == -signal.SIGXCPU


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("SIGXCPU", "the solution's process crashed: it used more than 6 s of CPU time on the case"),
        ("SIGSEGV", "the solution's process crashed (it was killed by SIGSEGV while running the case)"),
    ],
)
def test_a_worker_ended_by_a_signal_is_reported_with_why(monkeypatch, name, message):
    monkeypatch.setenv("KILL_SIGNAL", name)
    solution = Solution(f"{SOLUTIONS}/kills_itself.py", None)
    try:
        trace = solution.run(FIRST_CASE)
    finally:
        solution.close()
    assert trace.error == message


def test_a_worker_that_exits_is_reported_with_its_status():
    solution = Solution(f"{SOLUTIONS}/crashes.py", None)
    try:
        trace = solution.run(FIRST_CASE)
    finally:
        solution.close()
    assert trace.error == "the solution's process crashed (it exited with status 3 while running the case)"


# -- process groups ----------------------------------------------------------------------------
def test_the_worker_has_a_process_group_of_its_own():
    solution = Solution(f"{SOLUTIONS}/correct.py", None)
    try:
        pid = solution.process.pid
        assert os.getpgid(pid) == pid != os.getpgrp()
        assert group_members(pid) == [pid]
    finally:
        solution.close()


def test_processes_a_case_leaves_behind_are_killed_after_it(marker):
    solution = Solution(f"{SOLUTIONS}/leaves_processes.py", None)
    try:
        assert solution.run(FIRST_CASE).error is None
        assert eventually(lambda: not marked(marker))
        assert group_members(solution.process.pid) == [solution.process.pid]  # the worker itself lives on
        assert solution.run(FIRST_CASE).error is None
        assert eventually(lambda: not marked(marker))
    finally:
        solution.close()


def test_a_timed_out_case_kills_the_whole_group(marker):
    solution = Solution(f"{SOLUTIONS}/hangs_with_children.py", None, timeout=1.0)
    try:
        trace = solution.run(FIRST_CASE)
    finally:
        solution.close()
    assert trace.timeout
    assert eventually(lambda: not marked(marker))


def test_nothing_outlives_a_whole_check(marker):
    result = subprocess.run(
        [sys.executable, "-m", "engine", "check", "--no-scale", f"{SOLUTIONS}/leaves_processes.py"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout
    assert eventually(lambda: not marked(marker))


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL])
def test_stopping_the_checker_stops_its_worker_and_what_it_started(marker, how):
    checker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "engine",
            "check",
            "--no-scale",
            f"{SOLUTIONS}/hangs_with_children.py",
            "--timeout",
            "60",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert eventually(lambda: marked(marker), 30)
        checker.send_signal(how)
        assert checker.wait(30) == (128 + signal.SIGTERM if how == signal.SIGTERM else -signal.SIGKILL)
        # SIGTERM: the checker kills the group on its way out; SIGKILL: the worker sees its parent gone
        assert eventually(
            lambda: not marked(marker) and not marked("engine.practice.checker.worker .*hangs_with_children")
        )
    finally:
        checker.kill()
        checker.wait()


def test_the_numpy_solution_passes_under_the_address_space_limit():
    pytest.importorskip("numpy")
    report = check(f"{SOLUTIONS}/numpy_rows.py")
    assert report.exit_status == 0, [f.message for r in report.failed for f in r.findings]
