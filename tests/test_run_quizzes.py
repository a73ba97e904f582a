"""The predictions about a whole run (engine/analysis/run_quiz.py), pinned on small hand-made runs whose
answers are worked out in the comments, never read back from the code: the prefix cache's hit rate, the
prompt tokens' share of the busy time, the median and p99 time to first token, the deepest queue; a band's
edge refused rather than graded on a hair; and the cost model the scenario names."""

import pytest

from engine.analysis.quiz import QuizError, grade, question
from engine.analysis.replay import Replay
from engine.analysis.run_quiz import SHARE_BANDS, TTFT_BANDS, EdgeError, band
from engine.lab.quizzes import questions
from engine.lab.scenario import parse_scenario
from engine.lab.simulate import simulate
from engine.lab.toml_reader import ScenarioError

NO_STOPS = "[model]\nstop_chance = 0.0\n"


def run_of(toml: str):
    scenario = parse_scenario('title = "t"\n' + toml, "x.toml")
    return scenario, Replay(simulate(scenario))


def asked(toml: str, quizzes: str):
    scenario, replay = run_of(toml + quizzes)
    return questions(scenario, replay)


ONE_PROMPT = NO_STOPS + '[engine]\nbatch_size = 1\n[[requests]]\nid = "A"\nprompt = {prompt}\nmax_tokens = 2\n'


def one_request(length: int) -> str:
    return ONE_PROMPT.format(prompt=list(range(1, length + 1)))


def test_the_hit_rate_is_the_percent_of_the_looked_up_tokens_the_cache_held():
    # Blocks of 4: A computes its 8-token prompt at step 0 and caches its 2 full blocks; B (arriving at step 2)
    # has the same 8 tokens and a 9th: it finds 8. Looked up 8 + 9 = 17, found 8: 47.06 %, asked as 47.
    toml = NO_STOPS + "[engine]\nbatch_size = 2\n[engine.kv]\nblocks = 20\nblock_size = 4\nprefix_caching = true\n"
    toml += '[[requests]]\nid = "A"\nprompt = [1, 2, 3, 4, 5, 6, 7, 8]\nmax_tokens = 3\n'
    toml += '[[requests]]\nid = "B"\nprompt = [1, 2, 3, 4, 5, 6, 7, 8, 9]\nmax_tokens = 1\narrival_step = 2\n'
    (q,) = asked(toml, '[[quiz]]\nask = "?"\nkind = "hit_rate"\ntolerance = 3\n')
    assert (q.step, q.options, q.answer, q.tolerance) == (0, None, 47, 3)
    assert q.explanation == (
        "The prefix cache held 47.1 % of the 17 prompt tokens looked up in it: 8 tokens (answers from 44 to 50 "
        "are right).",
    )
    assert grade(q, 44) and grade(q, 50) and not grade(q, 51)
    with pytest.raises(ScenarioError, match=r"x.toml: quiz\[0\].kind: 'hit_rate' needs prefix caching"):
        asked(one_request(4), '[[quiz]]\nask = "?"\nkind = "hit_rate"\n')


def test_a_percent_s_tolerance_is_said_in_points():
    scenario, _ = run_of(one_request(4) + '[[quiz]]\nask = "How much?"\nkind = "hit_rate"\ntolerance = 5\n')
    assert scenario.quizzes[0].ask == "How much? (An estimate: answers within 5 points of the log's figure are right.)"


def test_the_prefill_share_is_the_prompt_tokens_seconds_over_the_busy_seconds():
    # The default cost model: a step 7 ms, a row sent 0.1 ms, a prompt token 0.05 ms. A's 400-token prompt is
    # prefilled at step 0 (7 + 0.1 + 20 = 27.1 ms), its second token is step 1 (7.1 ms): 20 / 34.2 = 58 %.
    (q,) = asked(one_request(400), '[[quiz]]\nask = "?"\nkind = "prefill_share"\n')
    assert (q.options, q.answer) == (SHARE_BANDS, "50 % to 75 %")
    assert q.explanation == (
        "Prompt tokens took 58 % of the busy time: 20.0 ms of the 34.2 ms the engine was busy, for 400 prompt "
        "tokens computed.",
    )


def test_the_time_to_first_token_is_the_median_or_the_p99_in_bands_of_ten():
    # One request: its first token ends step 0, 27.1 ms after it arrived (as above), at p50 and p99 alike.
    p50, p99 = asked(
        one_request(400), '[[quiz]]\nask = "?"\nkind = "ttft_p50"\n[[quiz]]\nask = "?"\nkind = "ttft_p99"\n'
    )
    assert p50.options == p99.options == TTFT_BANDS and p50.answer == p99.answer == "under 0.1 s"
    assert p50.explanation == (
        "The median time to first token is 27.1 ms: half of the 1 requests waited longer for their first token.",
    )
    assert p99.explanation[0].startswith("The p99 time to first token is 27.1 ms: 1 % of the 1 requests")


def test_the_scenario_s_cost_model_prices_the_whole_run_questions():
    # On OPT-13B on an A100 a step reads 26 GB at 1,555 GB/s (16.7 ms) and a prompt token costs 0.18 ms:
    # 400 tokens take 72 ms more, so the first token comes after about 89 ms, near the 0.1 s edge: refused.
    toml = 'cost = "opt-13b-a100-40gb"\n' + one_request(400)
    with pytest.raises(ScenarioError, match=r"x.toml: quiz\[0\].kind: 0.0\d+ is too near the edge 0.1"):
        asked(toml, '[[quiz]]\nask = "?"\nkind = "ttft_p50"\n')
    (q,) = asked('cost = "opt-13b-a100-40gb"\n' + one_request(800), '[[quiz]]\nask = "?"\nkind = "ttft_p50"\n')
    assert q.answer == "0.1 s to 1 s"  # 16.7 + 800 × 0.18 ms: about 0.16 s


def test_the_deepest_queue_is_counted_after_a_step_s_admissions():
    # One slot and three requests at step 0: A is admitted, B and C wait; the queue only shrinks after that.
    toml = NO_STOPS + "[engine]\nbatch_size = 1\n"
    toml += "".join(f'[[requests]]\nid = "{r}"\nprompt = [{i}]\nmax_tokens = 2\n' for i, r in enumerate("ABC", 1))
    (q,) = asked(toml, '[[quiz]]\nask = "?"\nkind = "peak_waiting"\n')
    assert (q.options, q.answer) == (None, 2)
    assert q.explanation == ("The queue peaks at 2 waiting, after the admissions of step 0, 0 s into the run.",)
    (alone,) = asked(one_request(4), '[[quiz]]\nask = "?"\nkind = "peak_waiting"\n')
    assert alone.answer == 0 and alone.explanation[0].startswith("Nobody waits after any step's admissions")


def test_a_whole_run_choice_takes_no_tolerance_and_may_be_asked_later():
    with pytest.raises(ScenarioError, match=r"quiz\[0\].tolerance: is for the number kinds only, not 'ttft_p99'"):
        asked(one_request(4), '[[quiz]]\nask = "?"\nkind = "ttft_p99"\ntolerance = 1\n')
    (q,) = asked(one_request(4), '[[quiz]]\nask = "?"\nkind = "peak_waiting"\nstep = 1\n')
    assert q.step == 1


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.05, "under 0.1 s"),
        (0.13, "0.1 s to 1 s"),
        (5.0, "1 s to 10 s"),
        (12.5, "over 10 s"),
        (0.09, None),
        (11.0, None),
    ],
)
def test_a_time_band_needs_a_fifth_of_clearance_from_its_edges(value, expected):
    if expected is None:
        with pytest.raises(EdgeError):
            band(value, (0.1, 1.0, 10.0), TTFT_BANDS, factor=1.2)
    else:
        assert band(value, (0.1, 1.0, 10.0), TTFT_BANDS, factor=1.2) == expected


def test_a_share_band_needs_three_points_of_clearance():
    assert band(0.2, (0.25, 0.5, 0.75), SHARE_BANDS, points=0.03) == "under 25 %"
    assert band(0.75, (0.25, 0.5, 0.75), SHARE_BANDS) == "over 75 %"  # (an edge belongs to the band above)
    with pytest.raises(EdgeError, match="too near the edge 0.5"):
        band(0.52, (0.25, 0.5, 0.75), SHARE_BANDS, points=0.03)


def test_question_without_figures_prices_with_the_default_cost_model():
    replay = run_of(one_request(400))[1]
    assert question(replay, "prefill_share").answer == "50 % to 75 %"
    with pytest.raises(QuizError, match="'hit_rate' needs prefix caching"):
        question(replay, "hit_rate")
