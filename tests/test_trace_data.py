"""The shipped traces (engine/lab/traces/): each decompresses to the publisher's bytes (sha256 as in the
traces' SOURCES.md), every file there is package data, and the licences and attribution ship beside them."""

import hashlib
import lzma
import tomllib
from fnmatch import fnmatch
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRACES = ROOT / "engine" / "lab" / "traces"
PUBLISHED_SHA256 = {  # from SOURCES.md, the copies' record
    "mooncake_conversation_trace.jsonl": "b8cbb061a85206d729d91cdc2981f43c9e0d99209dce588d3af5f7934408b9df",
    "mooncake_synthetic_trace.jsonl": "bd070915a98fc0ed264d7cfef2ce746002eb3076a695ec31ba2674c0111ec131",
    "AzureLLMInferenceTrace_code.csv": "54e9a6d2a4bd06ba1e060304b900abbc74cbea53de96506e60fe5bb4f2277fb6",
    "AzureLLMInferenceTrace_conv.csv": "2f1e5b666d4e3055fdbba98598ce2ec307767b9064e03e2fa46676dbcc7d0bf8",
}


def test_each_shipped_trace_decompresses_to_the_published_bytes():
    shipped = {path.name.removesuffix(".xz"): path for path in TRACES.glob("*.xz")}
    assert sorted(shipped) == sorted(PUBLISHED_SHA256)
    for name, path in shipped.items():
        assert hashlib.sha256(lzma.decompress(path.read_bytes())).hexdigest() == PUBLISHED_SHA256[name], name


def test_every_file_in_the_traces_folder_is_package_data():
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["engine.lab"]
    files = [path.relative_to(TRACES.parent).as_posix() for path in TRACES.iterdir() if path.is_file()]
    assert len(files) == 8
    assert [f for f in files if not any(fnmatch(f, pattern) for pattern in patterns)] == []


def test_the_licences_and_the_cc_by_attribution_ship_with_the_data():
    assert "Apache License" in (TRACES / "LICENSE-mooncake-APACHE-2.0.txt").read_text()
    assert "Attribution 4.0 International" in (TRACES / "LICENSE-azure-CC-BY-4.0.txt").read_text()
    notice = (TRACES / "NOTICE").read_text()
    for words in ("Pratyush Patel", "Splitwise: Efficient generative LLM inference", "ISCA 2024", "Apache License"):
        assert words in notice
