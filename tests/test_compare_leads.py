"""Compare leads with the run's own configuration, and shows the vLLM paper's figures only beside a
workload that compares with the paper's (issue 33, "Compare puts unlike things side by side"):
7.6's 4 slots on 400 blocks are not the paper's busy server, so its Orca-Max (89 %) no longer
stands beside the paper's 20.4 %, and its 1.23× (two runs without the cache) no longer heads a
lesson that runs with the cache."""

import dataclasses

from cblab.ui.charts.compare_view import PAPER_HIDDEN, PAPER_SHOWN
from engine.lab.compare import headline_ratios, own_configuration
from engine.lab.configurations import CACHED
from engine.lab.paper_systems import unlike_the_paper
from engine.lab.scenario import resolve_scenario
from tests.helpers import start_app

SEVEN_SIX = (
    "the paper measured a busy server whose memory limits the batch, but here its first 4 requests reserve only "
    "152 of the 400 blocks as Orca-Max (prompt + max_tokens) on 4 slots: the slots limit the batch, so each "
    "system's utilisation says how full the slots leave the pool, not how much its reservations waste."
)


def test_the_own_configuration_is_the_one_that_runs_as_the_lesson_does():
    assert own_configuration(resolve_scenario("shared-system-prompt")) == CACHED  # 7.6
    assert own_configuration(resolve_scenario("paper-four-systems")) == "continuous-reserve"  # 7.8
    assert own_configuration(resolve_scenario("watermark-and-thrash")) == "continuous-paged"  # 7.4, no watermark
    assert own_configuration(resolve_scenario("part1-basic-batch")) == "static-ragged"  # 1.1
    both = resolve_scenario("shared-system-prompt").with_engine(kv_watermark=0.2)  # the cache and a watermark
    assert own_configuration(both) is None


def results(**throughputs: float) -> dict[str, dict]:
    return {name.replace("_", "-"): {"throughput_tokens_per_s": t} for name, t in throughputs.items()}


def test_the_ratios_with_the_own_configuration_come_first_in_their_order():
    ran = results(
        continuous_ragged=123.0,
        static_ragged=100.0,
        continuous_paged=80.0,
        static_reserve=40.0,
        continuous_reserve=0.0,
        continuous_paged_cached=120.0,
    )
    ran["continuous-paged-wm-0.01"] = {"throughput_tokens_per_s": 88.0}
    assert headline_ratios(ran, CACHED) == [
        ("Prefix cache on / off throughput (paged)", 1.5),
        ("Continuous / static throughput (ragged, unlimited memory)", 1.23),
        ("Paged / static-reserve throughput", 2.0),
        ("Paged / continuous-reserve throughput", None),  # nothing generated
        ("Watermark 0.01 / none throughput (paged)", 1.1),
    ]
    assert [label for label, _ in headline_ratios(ran, "continuous-paged")][:4] == [
        "Paged / static-reserve throughput",
        "Paged / continuous-reserve throughput",
        "Prefix cache on / off throughput (paged)",
        "Watermark 0.01 / none throughput (paged)",
    ]
    assert [label for label, _ in headline_ratios(results(continuous_ragged=2.0, static_ragged=1.0), None)] == [
        "Continuous / static throughput (ragged, unlimited memory)"
    ]


def test_the_paper_compares_only_where_memory_not_the_slots_limits_the_batch():
    assert unlike_the_paper(resolve_scenario("shared-system-prompt")) == SEVEN_SIX  # 7.6
    for name in ("paper-four-systems", "watermark-and-thrash", "anyscale-cap32"):  # 7.8, 7.4, 8.1
        assert unlike_the_paper(resolve_scenario(name)) is None, name
    eight = resolve_scenario("paper-four-systems")  # 64 rows of 68 blocks need far more than 800 blocks
    roomy = dataclasses.replace(eight, engine=dataclasses.replace(eight.engine, kv_blocks=64 * 68))
    assert unlike_the_paper(roomy).startswith("the paper measured a busy server")  # a full batch fits exactly
    one_short = dataclasses.replace(roomy, engine=dataclasses.replace(roomy.engine, kv_blocks=64 * 68 - 1))
    assert unlike_the_paper(one_short) is None
    assert unlike_the_paper(resolve_scenario("part1-basic-batch")) == "this scenario has no KV pool."


def test_compare_on_7_6_leads_with_the_cached_run_and_leaves_the_paper_s_figures_out_saying_why():
    app = start_app(lesson="7.6", tab="Compare", predict="false")
    assert not app.exception and not app.error
    lead = next(m.value for m in app.markdown if m.value.startswith("**This run"))
    assert lead.startswith("**This run is `continuous-paged-cached`** (")
    assert app.metric[0].label == "Prefix cache on / off throughput (paged)"
    assert app.metric[1].label == "Continuous / static throughput (ragged, unlimited memory)"
    four = app.dataframe[2].value
    assert list(four.index) == ["Orca-Max", "Orca-Pow2", "Orca-Oracle", "vLLM"]
    assert "paper (Fig. 2)" not in four.columns and "KV util" in four.columns
    assert any(c.value.endswith(PAPER_HIDDEN + SEVEN_SIX) for c in app.caption)


def test_compare_on_7_8_puts_the_paper_s_figures_beside_the_four_systems_and_says_why():
    app = start_app(lesson="7.8", tab="Compare", predict="false")
    assert not app.exception and not app.error
    lead = next(m.value for m in app.markdown if m.value.startswith("**This run"))
    assert lead.startswith("**This run is `continuous-reserve`** (")
    assert [m.label for m in app.metric][:2] == [
        "Paged / continuous-reserve throughput",
        "Continuous / static throughput (ragged, unlimited memory)",
    ]
    four = app.dataframe[2].value
    assert four.loc["Orca-Max", "paper (Fig. 2)"] == "20.4%"
    assert any(c.value.endswith(PAPER_SHOWN) for c in app.caption)
