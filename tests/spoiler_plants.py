"""Spoilers the course once had, to plant back and see tests/spoilers.py catch (tests/test_spoilers.py).

Each is the text as it stood (issue 20, part 2, quotes the first three), where it stood, and the
predictions (by their place in the file, from 1) that it gives away.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Plant:
    lesson: str  # "1.2"
    where: str  # "lesson" (added to its text), "callout" (a [[real_servers]] text), or "ask 2" (replaces a question)
    text: str
    spoils: frozenset[int]  # the predictions it gives away
    kind: str | None = None  # "ask": the question's kind, when the planted one was of another kind


def plant(lesson: str, where: str, text: str, *spoils: int, kind: str | None = None) -> Plant:
    return Plant(lesson, where, " ".join(text.split()), frozenset(spoils), kind)


PLANTS = [
    plant(
        "1.2",
        "lesson",
        "Request A (max_tokens = 1) finishes after step 0, and at the very next step C takes its slot from the "
        "queue, while B is still running in slot 1.",
        1,
    ),
    plant(
        "3.1",
        "lesson",
        "The convention this project confirms rather than assumes: the terminating token is appended before the "
        "termination check, so with stop_token = 0 a row that emits 5, 5, 0 is delivered as [...prompt, 5, 5, 0].",
        2,
    ),
    plant(
        "7.3",
        "lesson",
        """At step 3 all three need their third block and only one is free, so the newest running row, C, is
        preempted (vLLM's policy, by recompute): its 2 blocks go back to the pool and C goes back to the head of
        the queue, keeping its 3 generated tokens. At step 5 A needs its fourth block; B is now the newest running
        row, so B is preempted too. A finishes alone; at step 6 B and C are readmitted and prefill all their tokens
        again (7 and 5: 12 tokens recomputed, since their keys and values were thrown away) before they continue.""",
        1,
        2,
    ),
    plant(
        "3.2",
        "lesson",
        """A: [7, 8] completes at step 3 after a false start. B: the stop [1, 1, 2] on output 1, 1, 1, 2 needs
        overlap handling - a matcher that resets on a mismatch misses it. C: [1, 2] is a prefix of [1, 2, 3], and
        the earliest completion wins. D: the prompt ends in 7 but stops match generated tokens only, so the first 8
        does not complete [7, 8].""",
        1,
        3,
    ),
    plant(
        "5.2",
        "lesson",
        """Continuous batching keeps every slot busy while work waits, but 0.8 requests arrive a step and only
        about 16 / 34 = 0.47 finish, so the queue grows for as long as they keep arriving: 17 wait at step 50, 66
        at step 250, 68 at the peak, and the median request waits 58 steps for a slot.""",
        2,
    ),
    plant(
        "7.2",
        "lesson",
        """A finishes at step 2 and gives blocks 0 and 3 back; D is admitted at step 3 into block 0; C's blocks
        come back at step 4.""",
        1,
    ),
    plant(
        "1.1",
        "lesson",
        """Two requests are submitted before run() and processed together: every step makes ONE model call whose
        batch holds both rows, appends one token to each row, and checks each row for its stop token or its
        max_tokens.""",
        1,
    ),
    plant("1.2", "lesson", "When the queue runs dry, the last step runs a batch of one row rather than waiting.", 3),
    plant(
        "3.1",
        "lesson",
        """The stop token is matched on GENERATED tokens only: request B's prompt is full of zeros, yet it runs
        until it generates a 0 itself.""",
        1,
    ),
    plant(
        "4.1",
        "lesson",
        """max_tokens counts generated tokens only, so A with max_tokens = 0 completes at once: its callback gets
        the prompt unchanged, and it never takes a slot or reaches the model.""",
        1,
    ),
    plant("4.1", "callout", "This lab accepts it, as the seeds ask, and delivers the prompt unchanged.", 1),
    plant("4.2", "lesson", "B takes slot 0 and first emits 8: B must NOT stop, because the 7 belonged to A.", 1),
    plant("5.4", "ask 2", "A is cancelled at step 3. What is its finish reason?", 2, kind="reason"),
    plant("6.1", "lesson", "In padded mode every model call sends exactly batch_size rows, 4 here.", 1),
]

# Lessons with two predictions about one step, whose step narration, were it in the first one's
# explanation, would answer the second: (lesson, the prediction it would give away).
SAME_STEP = [("1.2", 3), ("3.3", 3), ("4.1", 2), ("4.2", 2), ("5.3", 2), ("5.4", 3), ("5.5", 2), ("7.1", 2), ("8.5", 2)]
