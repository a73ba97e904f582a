"""Request colours on the stage (engine/analysis/colours.py): neighbours never share one, requests on
screen together differ where 12 colours allow, and a big run spreads over the whole palette."""

from collections import Counter

import pytest

from engine.analysis.colours import COLOURS, colours
from engine.analysis.frames import _occupancy
from engine.analysis.replay import Replay
from engine.lab.scenario import resolve_scenario
from engine.lab.simulate import simulate


def coloured(name: str) -> tuple[list[list[int]], list[int]]:
    log = simulate(resolve_scenario(name))
    occupancy = _occupancy(Replay(log))
    return occupancy, colours(occupancy, len(log.requests))


def overlaps(a: list[int], b: list[int], touching: int = 0) -> bool:
    return a[2] <= b[3] + touching and b[2] <= a[3] + touching


def test_requests_in_any_two_slots_at_once_differ_in_lesson_1_3():
    _, colour = coloured("first-example")  # r0, r1, r2 run together in slots 0-2 (r0 and r2 used to match)
    assert colour == [0, 1, 2]


@pytest.mark.parametrize("name", ["part2-slot-refill", "stop-sequences", "preemption", "poisson-arrivals"])
def test_neighbours_and_successors_never_share_and_rows_running_together_differ(name):
    occupancy, colour = coloured(name)
    for a in occupancy:
        for b in occupancy:
            if a[1] == b[1]:
                continue
            if abs(a[0] - b[0]) <= 1 and overlaps(a, b, touching=1):
                assert colour[a[1]] != colour[b[1]], (a, b)
    if max(row[0] for row in occupancy) >= COLOURS:
        return  # (more slots than colours: only the strict rule holds)
    by_step = {}  # with at most 12 slots, every row running at a step has its own colour
    for _, request, first, last, _ in occupancy:
        for step in range(first, last + 1):
            by_step.setdefault(step, []).append(colour[request])
    crowded = [held for held in by_step.values() if len(held) <= COLOURS and len(set(held)) < len(held)]
    assert not crowded


def test_a_big_run_uses_the_whole_palette_evenly():
    _, colour = coloured("anyscale-cap32")  # 1,000 requests in 64 slots
    counts = Counter(colour)
    assert sorted(counts) == list(range(COLOURS))
    assert max(counts.values()) <= 1.5 * len(colour) / COLOURS
