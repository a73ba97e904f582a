"""Check the classroom client against headless Chromium: same messages, same bytes.

    python -m benchmarks.chromium_compare [--lesson 1.1]

One server, warmed by a first client; then a Chromium page and a
`benchmarks/streamlit_client.Session` each land on the lesson, type 2 in its first prediction,
press Check, then Next lesson. Compared:

- the BackMsg `rerun_script` each of those four steps sends: query string, page script hash
  and browser context exactly; every widget state the client sends, byte for byte, against
  Chromium's; the cached-message hashes the client names must be among Chromium's. Chromium
  also sends the stage's own reports (a custom component's JavaScript, which the client does
  not run; they also cost Chromium extra reruns, left out of the pairing), and after a Check
  its page can still hold the answered prediction's state when the stage's report overtakes
  the page update: such states only Chromium sends are listed, not counted as differences.
  After such a rerun of the stage's own, Chromium's URL holds the reported step and its
  cache has aged one run more, so a later step's query string and cached hashes are listed
  too, not counted;
- every ForwardMsg of the runs of the first three steps (a landing is two: the page, and the run its
  report of the first paint asks for), in order, byte for byte (`new_session`
  by kind and size, as it names the session; `script_finished` by status, as it names the run).

Prints one line per difference and exits 1 if there is any.
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import hashlib
import re
import sys

from playwright.sync_api import sync_playwright
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from benchmarks.lessons import lesson_keys
from benchmarks.streamlit_client import Session
from tests.browser_support import launch, open_app, streamlit_server, wait_until_idle

# the landing's two runs (the page's, then the one its first paint's report asks for), typed answer, Check
# (the Next lesson run races the stage's report in Chromium)
COMPARED_RUNS = 4


def chromium_messages(url: str, lesson: str) -> tuple[list[BackMsg], list[ForwardMsg]]:
    """What Chromium sends (rerun requests) and receives while a learner does the four steps."""
    sent: list[BackMsg] = []
    received: list[ForwardMsg] = []

    def on_socket(socket) -> None:
        socket.on("framesent", lambda payload: sent.append(BackMsg.FromString(payload)))
        socket.on("framereceived", lambda payload: received.append(ForwardMsg.FromString(payload)))

    with sync_playwright() as playwright:
        browser = launch(playwright)
        page = browser.new_page()
        page.on("websocket", on_socket)
        open_app(page, url, f"?lesson={lesson}")
        answer = page.get_by_placeholder("a number")
        answer.fill("2")
        answer.press("Enter")
        wait_until_idle(page)
        page.get_by_role("button", name="Check prediction").click()
        wait_until_idle(page)
        page.get_by_role("button", name=re.compile("^Next lesson")).click()
        wait_until_idle(page)
        browser.close()
    return [m for m in sent if m.HasField("rerun_script")], received


async def client_messages(url: str, lesson: str) -> tuple[list[BackMsg], list[ForwardMsg]]:
    """The same four steps from the classroom client: its rerun requests, and the messages of its first runs."""
    session = Session(url, f"lesson={lesson}")
    await session.land()
    received = list(session.received)
    keys = lesson_keys(session)
    await session.set_value(keys.answer, 2)
    received += session.received
    await session.click(keys.check)
    received += session.received
    await session.click("next_lesson")
    await session.close()
    return [BackMsg.FromString(raw) for raw in session.sent], received


def stage_ids(messages: list[ForwardMsg]) -> set[str]:
    return {
        m.delta.new_element.bidi_component.id
        for m in messages
        if m.HasField("delta") and m.delta.new_element.WhichOneof("type") == "bidi_component"
    }


def widget_states(message: BackMsg) -> dict[str, bytes]:
    return {w.id: w.SerializeToString() for w in message.rerun_script.widget_states.widgets}


def learner_steps(reruns: list[BackMsg], stages: set[str]) -> list[tuple[BackMsg, bool]]:
    """The reruns a learner's steps caused, each with whether a stage's own rerun came before it: one
    that brings a stage's new report, with no button pressed, is the stage's and is left out."""
    steps, previous, reported = [], {}, False
    for message in reruns:
        states = widget_states(message)
        reports = {wid: state for wid, state in states.items() if wid in stages}
        pressed = any(w.trigger_value for w in message.rerun_script.widget_states.widgets)
        if pressed or not reports or reports == {wid: previous.get(wid) for wid in reports}:
            steps.append((message, reported))
        else:
            reported = True
        previous = states
    return steps


def rerun_differences(
    n: int, theirs: BackMsg, ours: BackMsg, stages: set[str], after_report: bool
) -> tuple[list[str], list[str]]:
    """(differences, notes) between Chromium's and the client's rerun request of step `n`. After a
    stage's own rerun in Chromium, its URL holds the reported step and its cache is a run older:
    those differences are notes."""
    found, notes = [], []
    late = notes if after_report else found
    for field in ("query_string", "page_script_hash", "context_info"):
        if getattr(theirs.rerun_script, field) != getattr(ours.rerun_script, field):
            (late if field == "query_string" else found).append(f"step {n}: {field} differs")
    browser_states, client_states = widget_states(theirs), widget_states(ours)
    for wid, state in client_states.items():
        if browser_states.get(wid) != state:
            theirs_state = browser_states.get(wid)
            found.append(f"step {n}: widget {wid} is {state!r} from the client, {theirs_state!r} from Chromium")
    for wid in sorted(set(browser_states) - set(client_states)):
        why = "the stage's report" if wid in stages else "a widget the last run no longer showed"
        notes.append(f"step {n}: only Chromium sends {wid.rsplit('-', 1)[-1]} ({why})")
    extra = set(ours.rerun_script.cached_message_hashes) - set(theirs.rerun_script.cached_message_hashes)
    if extra:
        late.append(f"step {n}: the client names cached messages Chromium does not: {sorted(extra)}")
    if after_report:
        notes.append(f"step {n} came after the stage's own rerun in Chromium (URL and cache one rerun on)")
    return found, notes


def first_runs(messages: list[ForwardMsg], count: int) -> list[ForwardMsg]:
    """The messages of the first `count` finished script runs, from `new_session` to `script_finished`."""
    runs, current = [], None
    for message in messages:
        if message.HasField("new_session"):
            current = []
        if current is not None:
            current.append(message)
        if message.HasField("script_finished") and current is not None:
            runs.append(current)
            current = None
    return [m for run in runs[:count] for m in run]


def fingerprints(messages: list[ForwardMsg]) -> list[str]:
    """One line a message: its kind and place, and its bytes' digest."""
    lines = []
    for message in messages:
        kind = message.WhichOneof("type")
        wire = message.SerializeToString(deterministic=True)
        if kind == "new_session":
            mark = f"{len(wire)} bytes"
        elif kind == "script_finished":
            mark = ForwardMsg.ScriptFinishedStatus.Name(message.script_finished)
        else:
            mark = hashlib.sha256(wire).hexdigest()[:12]
        if kind == "delta":
            kind = f"delta {list(message.metadata.delta_path)} {message.delta.new_element.WhichOneof('type') or ''}"
        lines.append(f"{kind} {mark}")
    return lines


def differences(chromium: tuple, client: tuple) -> tuple[list[str], list[str]]:
    (browser_sent, browser_received), (client_sent, client_received) = chromium, client
    stages = stage_ids(browser_received)
    found, notes = [], []
    steps = learner_steps(browser_sent, stages)
    if len(steps) != len(client_sent):
        found.append(f"{len(steps)} learner steps from Chromium, {len(client_sent)} from the client")
    for n, ((theirs, after_report), ours) in enumerate(zip(steps, client_sent), start=1):
        more_found, more_notes = rerun_differences(n, theirs, ours, stages, after_report)
        found += more_found
        notes += more_notes
    theirs, ours = fingerprints(first_runs(browser_received, COMPARED_RUNS)), fingerprints(client_received)
    found += [f"runs: {line}" for line in difflib.unified_diff(theirs, ours, "chromium", "client", n=0, lineterm="")]
    return found, notes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lesson", default="1.1", help="the lesson both open (default 1.1)")
    args = parser.parse_args()
    with streamlit_server() as url:
        asyncio.run(client_messages(url, args.lesson))  # the lesson's run is cached: both land on a warm server
        browser = chromium_messages(url, args.lesson)
        client = asyncio.run(client_messages(url, args.lesson))
    found, notes = differences(browser, client)
    print(
        f"lesson {args.lesson}: {len(client[0])} rerun requests and the {len(client[1])} messages of "
        f"{COMPARED_RUNS} runs compared with Chromium's"
    )
    for line in notes + found:
        print(line)
    print("same messages" if not found else f"{len(found)} differences")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
