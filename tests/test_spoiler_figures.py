"""The spoiler rules for the whole run's figures and the stored cache curve (tests/spoiler_figures.py), pinned
on small sentences both ways, and proven on the chapter "Real traffic" itself: each of its lessons keeps its
answers for the reveal, where the rules must find them."""

import pytest

from engine.lab.course import load_course
from engine.lab.scenario import resolve_scenario
from tests.lesson_screen import predictions
from tests.spoiler_figures import cache_share, hit_rate, peak_waiting, prefill_share, ttft_p50, ttft_p99
from tests.spoiler_rules import Facts
from tests.spoiler_text import sentences
from tests.spoilers import RULES, facts

COURSE = load_course()
TRAFFIC = [lesson.name for lesson in COURSE.lessons if COURSE.chapters[lesson.chapter].title.startswith("Real traffic")]


def said(answer, tolerance=0) -> Facts:
    return Facts(None, answer, 0, frozenset(), tolerance=tolerance)


@pytest.mark.parametrize(
    ("rule", "sentence", "answer", "tolerance", "spoils"),
    [
        (hit_rate, "The prefix cache held 9.3 % of the prompt tokens.", 9, 5, True),
        (hit_rate, "About 12 % of the tokens are found in the cache.", 9, 5, True),
        (hit_rate, "The paper counts 40 % of the prompt tokens as reusable in a cache.", 9, 5, False),
        (hit_rate, "A block of 512 tokens is 4 % of a prompt.", 9, 5, False),  # (no word of the cache)
        (prefill_share, "Prompt tokens took 60 % of the busy time.", "50 % to 75 %", 0, True),
        (prefill_share, "Prefill is most of the GPU's work here.", "50 % to 75 %", 0, True),
        (prefill_share, "Prefill takes a small share of the time.", "under 25 %", 0, True),
        (
            prefill_share,
            "Each prompt token costs 29.5 µs, and 89 arrive for each generated one.",
            "50 % to 75 %",
            0,
            False,
        ),
        (prefill_share, "Prompt tokens took 20 % of the busy time.", "50 % to 75 %", 0, False),
        (ttft_p50, "The median first token came after 71 ms.", "under 0.1 s", 0, True),
        (ttft_p50, "The median time to first token is 0.3 s.", "0.1 s to 1 s", 0, True),
        (ttft_p50, "The p99 first token came after 71 ms.", "under 0.1 s", 0, False),  # (another percentile)
        (ttft_p50, "A full chunk takes about 246 ms.", "0.1 s to 1 s", 0, False),
        (ttft_p99, "The p99 time to first token was 18.8 s.", "over 10 s", 0, True),
        (ttft_p99, "The slowest first tokens waited 12 s.", "over 10 s", 0, True),
        (ttft_p99, "The median first token came after 2.56 s.", "1 s to 10 s", 0, False),
        (peak_waiting, "The queue peaked at 270 after step 672.", 270, 100, True),
        (peak_waiting, "About 200 requests wait at the worst.", 270, 100, True),
        (peak_waiting, "In the rest, 385 requests arrive.", 270, 100, False),
        (peak_waiting, "Nobody waited: every request was admitted at once.", 0, 0, True),
        (peak_waiting, "The queue stays empty.", 0, 0, True),
        (peak_waiting, "About six arrive a second.", 0, 0, False),
        (cache_share, "A 3M-token cache reaches under half of the maximum hit rate.", "25 % to 50 %", 0, True),
        (cache_share, "With 3 million tokens it finds 36 % of the maximum.", "25 % to 50 %", 0, True),
        (cache_share, "The paper counts 40 % of the prompt tokens as reusable.", "25 % to 50 %", 0, False),
    ],
)
def test_a_figure_is_given_away_by_its_value_or_band_in_a_sentence_about_it(rule, sentence, answer, tolerance, spoils):
    assert any(rule(s, said(answer, tolerance)) for s in sentences(sentence)) == spoils


@pytest.mark.parametrize("name", TRAFFIC)
def test_each_real_traffic_lesson_keeps_its_figures_for_the_reveal_where_the_rules_find_them(name):
    """Every prediction of the chapter about the whole run (not the stored curve, which the reveal quotes in its
    own words) is answered in the reveal, in words the rules catch: they would catch it in the lesson too."""
    reveal = resolve_scenario(name).reveal
    for asked in predictions(name):
        if asked.quiz.kind in ("hit_rate", "prefill_share", "ttft_p50", "ttft_p99", "peak_waiting"):
            known = facts(asked)
            assert any(RULES[asked.quiz.kind](s, known) for s in sentences(reveal)), (name, asked.quiz.kind)
