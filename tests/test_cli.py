"""`python -m engine`: summaries on stdout, files that load back, one-line errors with exit 2."""

import csv
import json
import subprocess
import sys

from engine import EventLog


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "engine", *args], capture_output=True, text=True, timeout=300)


def test_generated_workload_run_prints_a_summary_and_writes_a_loadable_log(tmp_path):
    out = tmp_path / "log.jsonl"
    result = run_cli("run", "--requests", "30", "--batch-size", "4", "--padded", "--static", "--jsonl", str(out))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[1].split(None, 1) == ["mode", "static, padded, batch_size 4"]
    assert lines[2].split() == ["requests", "30"]
    log = EventLog.from_jsonl(out.read_text())
    assert len(log.requests) == 30 and log.config.padded and log.config.batching == "static"


def test_scenario_run_with_narration_and_csv(tmp_path):
    table = tmp_path / "requests.csv"
    result = run_cli("run", "part2-slot-refill", "--narrate", "--csv", str(table))
    assert result.returncode == 0, result.stderr
    assert "  Request D is admitted into slot 0 from the queue." in result.stdout  # step 3: generated
    assert "  C is admitted into slot 0, the slot A freed one step ago" in result.stdout  # step 1: the lesson's caption
    rows = list(csv.DictReader(table.open()))
    assert [(r["request_id"], r["output_tokens"], r["finish_reason"]) for r in rows] == [
        ("A", "1", "max_tokens"),
        ("B", "3", "max_tokens"),
        ("C", "2", "max_tokens"),
        ("D", "1", "max_tokens"),
    ]


def test_every_builtin_scenario_runs_and_its_jsonl_loads(tmp_path):
    listed = [line.split() for line in run_cli("list").stdout.splitlines()]
    names = [words[0] for words in listed if words[1] != "trace"]  # (a whole-trace replay is an hour: below)
    assert len(names) >= 12
    assert [words[0] for words in listed if words[1] == "trace"] == [
        "trace-azure-code",
        "trace-azure-conversation",
        "trace-mooncake-conversation",
        "trace-mooncake-synthetic",
    ]
    for name in names:
        out = tmp_path / f"{name}.jsonl"
        result = run_cli("run", name, "--jsonl", str(out))
        assert result.returncode == 0, (name, result.stderr)
        assert EventLog.from_jsonl(out.read_text()).num_steps > 0


def test_compare_json_has_the_four_configurations_and_the_required_figures():
    result = run_cli("compare", "static-vs-continuous", "--json")
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    assert list(figures) == ["continuous-ragged", "continuous-padded", "static-ragged", "static-padded"]
    required = {
        "throughput_tokens_per_s",
        "slot_utilization",
        "padding_waste",
        "ttft_p50_s",
        "ttft_p99_s",
        "tpot_p50_s",
        "e2e_p50_s",
        "steps",
    }
    assert all(required <= set(config) for config in figures.values())
    assert figures["continuous-ragged"]["steps"] == 9 and figures["static-ragged"]["steps"] == 14
    assert figures["continuous-padded"]["padding_waste"] > 0 == figures["continuous-ragged"]["padding_waste"]


def test_compare_table_ends_with_the_throughput_ratio():
    result = run_cli("compare", "static-vs-continuous")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[1] == "this scenario runs as static-ragged: the ratios that involve it come first"
    assert lines[-1] == "continuous / static throughput (ragged, unlimited memory): 1.53x"


def test_compare_leads_with_the_scenarios_own_configuration_and_leaves_out_unlike_paper_figures():
    """7.6's 4 slots limit its batch, not its pool: the paper's Fig. 2 column is left out, and says why; the
    ratios with the scenario's own configuration (the prefix cache) come first, as in the app's Compare."""
    lines = run_cli("compare", "shared-system-prompt").stdout.splitlines()
    assert lines[1] == "this scenario runs as continuous-paged-cached: the ratios that involve it come first"
    assert not any(line.startswith("the vLLM paper's four systems") for line in lines)
    left_out = [line for line in lines if line.startswith("the vLLM paper's Fig. 2 figures are left out: ")]
    assert len(left_out) == 1 and "152 of the 400 blocks" in left_out[0]
    ratios = lines[lines.index(left_out[0]) + 1 :]
    assert ratios[0] == "prefix cache on / off throughput (paged): 1.50x"
    assert ratios[1] == "continuous / static throughput (ragged, unlimited memory): 1.23x"


def test_bad_scenario_path_exits_2_with_one_line(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('title = "t"\n[[requests]]\nprompt = [1]\nmax_tokens = -2\n')
    result = run_cli("run", str(bad))
    assert result.returncode == 2
    assert result.stderr == f"error: {bad}: requests[0].max_tokens: must be an integer ≥ 0, got -2\n"
    missing = run_cli("compare", "no-such-scenario")
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1


def test_bad_argument_exits_2_with_a_one_line_error():
    result = run_cli("run", "--batch-size", "0")
    assert result.returncode == 2
    assert result.stderr == "error: argument --batch-size: must be an integer from 1 to 256, got '0'\n"


def test_long_runs_report_progress_on_stderr():
    result = run_cli("run", "anyscale-cap32", "--static")
    assert result.returncode == 0
    assert "anyscale-cap32: step 2,000" not in result.stderr  # 507 steps: too short to report
    result = run_cli("run", "--requests", "2000", "--batch-size", "2", "--max-tokens", "8")
    assert "generated: step 2,000, " in result.stderr


def test_compare_with_no_generated_tokens_does_not_crash(tmp_path):
    scenario = tmp_path / "zero.toml"
    scenario.write_text('title = "t"\n[[requests]]\nprompt = [1]\nmax_tokens = 0\n')
    result = subprocess.run(
        [sys.executable, "-m", "engine", "compare", str(scenario)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == (
        "continuous / static throughput (ragged, unlimited memory): - (no tokens were generated)"
    )
    bad = subprocess.run(
        [sys.executable, "-m", "engine", "run", "--requests", "0"], capture_output=True, text=True, timeout=60
    )
    assert bad.returncode == 2 and "must be an integer from 1 to 100,000, got '0'" in bad.stderr
