"""A published trace is credited wherever the lab shows it (engine/lab/trace_sources.py): its source, licence
and paper, as the Azure data's CC BY 4.0 asks, under the text of every lesson that replays one (presentation
mode included) and in `python -m engine run`'s output."""

import dataclasses
import json

import pytest

from cblab.cli.main import main as cli_main
from engine.lab.course import load_course
from engine.lab.scenario import resolve_scenario
from engine.lab.trace_file import BUILTIN_TRACES
from engine.lab.trace_sources import SOURCES, attribution
from tests.helpers import start_app

TRACE_LESSONS = [lesson.name for lesson in load_course().lessons if resolve_scenario(lesson.name).trace is not None]


def test_every_built_in_trace_has_its_source_licence_and_paper():
    assert set(SOURCES) == set(BUILTIN_TRACES)
    azure = attribution(resolve_scenario("traffic-coding").trace)
    assert azure.startswith("Trace data: the Azure LLM inference trace 2023, code (https://github.com/Azure/")
    for words in ("CC BY 4.0", "a part of it, replayed through this engine", "Pratyush Patel", "ISCA 2024"):
        assert words in azure
    mooncake = attribution(resolve_scenario("traffic-kimi-cache").trace, markdown=True)
    assert "([github.com/kvcache-ai/Mooncake](https://github.com/kvcache-ai/Mooncake)), Apache-2.0;" in mooncake
    assert "FAST 2025" in mooncake
    whole = attribution(resolve_scenario("trace-azure-code").trace)
    assert "; replayed through this engine, the data itself unchanged." in whole  # (the whole hour: no "part")
    faster = dataclasses.replace(resolve_scenario("traffic-coding").trace, rate=2.0)
    assert "replayed through this engine at 2× its speed" in attribution(faster)
    assert attribution(None) is None
    assert attribution(dataclasses.replace(faster, name=None, file="/tmp/mine.csv")) is None  # a user's own file


def test_the_chapter_real_traffic_replays_traces():
    assert len(TRACE_LESSONS) == 4


def test_run_credits_the_trace_in_its_table_and_its_json(capsys):
    assert cli_main(["run", "traffic-coding"]) == 0
    table = capsys.readouterr().out
    assert "\ntrace data           the Azure LLM inference trace 2023, code (https://github.com/Azure/" in table
    assert cli_main(["run", "traffic-coding", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["trace_attribution"] == attribution(resolve_scenario("traffic-coding").trace)
    assert cli_main(["run", "part2-slot-refill", "--json"]) == 0
    assert "trace_attribution" not in json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("presentation", ["false", "true"])
def test_the_lesson_box_of_a_trace_lesson_credits_its_trace(presentation):
    app = start_app(lesson="traffic-coding", presentation=presentation)
    assert not app.exception
    credit = attribution(resolve_scenario("traffic-coding").trace, markdown=True)
    assert credit in [c.value for c in app.caption]
    other = start_app(lesson="part2-slot-refill", presentation=presentation)
    assert not any(c.value.startswith("Trace data:") for c in other.caption)
