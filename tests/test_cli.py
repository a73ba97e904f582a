"""`python -m engine run`: a summary on stdout, a loadable JSONL file, exit 2 on bad input."""

import subprocess
import sys

from engine import EventLog


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "engine", *args], capture_output=True, text=True, timeout=120)


def test_run_prints_a_summary_and_writes_a_loadable_log(tmp_path):
    out = tmp_path / "log.jsonl"
    result = run_cli("run", "--requests", "30", "--batch-size", "4", "--padded", "--static", "--jsonl", str(out))
    assert result.returncode == 0, result.stderr
    assert "mode                       static, padded, batch_size 4" in result.stdout
    assert "requests                   30" in result.stdout
    log = EventLog.from_jsonl(out.read_text())
    assert len(log.requests) == 30 and log.settings.padded and log.settings.batching == "static"


def test_bad_argument_exits_2_with_a_one_line_error():
    result = run_cli("run", "--batch-size", "0")
    assert result.returncode == 2
    assert result.stderr == "error: batch_size: must be >= 1, got 0\n"
