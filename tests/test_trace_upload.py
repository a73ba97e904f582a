"""A trace uploaded into the app (engine/lab/trace_upload.py, cblab/ui/runs/runs.py): replayed on the built-in
replays' deployment within the app's limits; a broken or oversized file is one message naming its line and
field, or the limit, never a traceback."""

import gzip
import lzma

import pytest

from cblab.ui.runs.runs import Overrides, UserError, is_event_log, is_trace, load, uploaded_scenario
from engine.lab.scenario import TRACE_DIR
from tests.helpers import Upload
from tests.test_hostile_uploads import TINY_JSONL
from tests.test_trace_file import MOONCAKE_SAMPLE

AZURE = (TRACE_DIR.parents[1] / "engine/lab/traces/AzureLLMInferenceTrace_code.csv.xz").read_bytes()
AZURE_HEAD = b"\n".join(lzma.decompress(AZURE).split(b"\n")[:121])  # the header and 120 requests


def test_an_azure_csv_is_replayed_on_one_h100_and_shows_its_title():
    run = load("upload", Upload("code.csv", AZURE_HEAD), Overrides())
    assert run.scenario.title == "Your trace: code.csv" and run.scenario.cost == "llama-2-7b-h100-80gb"
    assert len(run.log.requests) == 120 and run.scenario.engine.block_size == 16


def test_a_mooncake_jsonl_with_hash_ids_gets_the_prefix_cache_and_blocks_of_512():
    upload = Upload("kimi.jsonl", MOONCAKE_SAMPLE.encode())
    assert is_trace(upload) and not is_event_log(upload)
    scenario = uploaded_scenario(upload)
    assert scenario.engine.prefix_caching and scenario.engine.block_size == 512
    assert len(load("upload", upload, Overrides()).log.requests) == 2


def test_a_compressed_trace_reads_as_the_plain_one():
    plain = load("upload", Upload("code.csv", AZURE_HEAD), Overrides())
    packed = load("upload", Upload("code.csv.gz", gzip.compress(AZURE_HEAD)), Overrides())
    assert packed.log.outputs() == plain.log.outputs()


def test_an_event_log_is_still_replayed_as_recorded():
    upload = Upload("far.jsonl", TINY_JSONL)
    assert is_event_log(upload) and not is_trace(upload)


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        (
            "bad.csv",
            b"TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,x,3\n",
            "bad.csv: line 2: ContextTokens",
        ),
        (
            "bad.jsonl",
            b'{"timestamp": 0, "input_length": 5, "output_length": -3}\n',
            "bad.jsonl: line 1: output_length",
        ),
        ("bomb.xz", lzma.compress(b"\n" * 6_000_000), "bomb.xz: the trace is larger decompressed"),
        ("cut.gz", gzip.compress(AZURE_HEAD)[:200], "cut.gz: the compressed trace is cut short"),
        ("big.csv", b"x" * 6_000_000, "big.csv: the file is 6.0 MB; the limit is 5 MB"),
    ],
)
def test_a_broken_trace_is_one_message_naming_its_line_and_field(name, data, message):
    upload = Upload(name, data)
    assert uploaded_scenario(upload) is None  # the sidebar falls back to plain settings
    with pytest.raises(UserError, match=message):
        load("upload", upload, Overrides())


def test_a_trace_over_the_apps_limits_is_refused_naming_the_limit():
    """Kimi's whole hour would generate 4.1M tokens; the app runs at most 2M a run."""
    mooncake = (TRACE_DIR.parents[1] / "engine/lab/traces/mooncake_conversation_trace.jsonl.xz").read_bytes()
    with pytest.raises(UserError, match="kimi.jsonl.xz: workload.trace: 12,031 requests, .* the limit is 2,000,000"):
        load("upload", Upload("kimi.jsonl.xz", mooncake), Overrides())
