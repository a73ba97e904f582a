"""The slot-mapping invariant, checked at every model call from the event log alone.

Seed 000's scheduler sketch keeps `running: dict[slot, request]` and asks you to "assert that
set(running) == set(active slots)" after every refill. Read as bare slot ids, that set check is
too weak for the classic bug: a scheduler that credits the model's answers to the wrong rows
(the zoo's `CrossedResults`: answers mapped back in submission order, not the order the rows
were sent) still has exactly one running request per active slot. The check that catches it
compares pairs: set(running.items()) == set of (active slot, the request credited with that
slot's answer), that is, every answer goes to the request that holds the slot it came from.

How the log shows it: a step's `model_call` names the slots sent (its active mask, answers in
slot order), and the engine writes the step's `emit` events in the order of the answers. So
the j-th emit carries the answer of the j-th active slot, and must name that slot's holder
(rebuilt from `admit`, `evict` and `preempt`). Both forms are reported for every model call.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.log.event_log import EventLog


@dataclass(frozen=True, slots=True)
class SlotCheck:
    """One model call: who held each slot sent, and who got that slot's answer (in answer order)."""

    step: int
    running: tuple[tuple[int, str], ...]  # (slot sent, the request holding it)
    credited: tuple[tuple[int, str], ...]  # (slot the answer came from, the request it was credited to)
    logged_slots: tuple[int, ...]  # the slot each emit names: where the engine thinks its row is

    @property
    def slots_agree(self) -> bool:
        """The bare-ids form: set(running slots) == set(active slots). It holds for crossed results too."""
        return {slot for slot, _ in self.running} == set(self.logged_slots)

    @property
    def holds(self) -> bool:
        """The pairs form: set(running.items()) == set(credited.items())."""
        return set(self.running) == set(self.credited)

    def mismatches(self) -> list[tuple[int, str, str]]:
        """(slot, the request holding it, the request its answer went to) for every crossed answer."""
        holder = dict(self.running)
        return [(slot, holder[slot], rid) for slot, rid in self.credited if holder.get(slot) != rid]


def check_slot_mapping(log: EventLog) -> list[SlotCheck]:
    """One `SlotCheck` per model call that sent rows, in step order."""
    holder: dict[int, str] = {}  # slot -> request holding it
    calls: list[tuple[int, tuple, list, list]] = []  # (step, running at the call, credited, logged slots)
    sent: list[int] = []  # the latest call's active slots, in slot (answer) order
    for e in log:
        if e.kind == "model_call":
            sent = [slot for slot, active in enumerate(e.active_mask) if active]
            calls.append((e.step, tuple((slot, holder.get(slot, "")) for slot in sent), [], []))
        elif e.kind == "emit":
            _, _, credited, logged = calls[-1]  # an emit follows its step's call (the loader checks it)
            slot = sent[len(credited)] if len(credited) < len(sent) else -1  # -1: more answers than rows sent
            credited.append((slot, e.request_id))
            logged.append(e.slot)
        elif e.kind == "admit":
            holder[e.slot] = e.request_id
        elif e.kind in ("evict", "preempt") and e.slot is not None:
            holder.pop(e.slot, None)
    return [
        SlotCheck(step, running, tuple(credited), tuple(logged)) for step, running, credited, logged in calls if running
    ]


def first_violation(log: EventLog) -> SlotCheck | None:
    """The first model call at which an answer went to a request not holding its slot, or None."""
    return next((check for check in check_slot_mapping(log) if not check.holds), None)
