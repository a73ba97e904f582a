"""A browserless learner: one page of the app, spoken over Streamlit's own websocket protocol.

It does what Streamlit's frontend does (the messages were compared with headless Chromium's):

1. GET the page (`/?lesson=1.1`), `/_stcore/health` and `/_stcore/host-config`, keeping the
   cookies: Streamlit's `_streamlit_xsrf`, and the sticky-session cookie of a proxy in front;
2. open `/_stcore/stream` with the subprotocols `streamlit, <XSRF token>` (the header carries
   the token), those cookies and an Origin header, no pings (a browser sends none);
3. send a BackMsg `rerun_script`: the URL's query string, the state of every widget on the
   page (`benchmarks/widget_values.py`), the page script hash, the browser's context (time
   zone, locale, URL) and the hashes of the cached messages it holds;
4. read ForwardMsgs until `script_finished`: `new_session` starts a run (session id, page
   hash, how many runs a cached message is kept), `delta` brings elements (a widget id ends
   in `-<user key>`), `page_info_changed` the URL's new query string, and `ref_hash` stands
   for a cached message (a large element the client already holds, sent by hash);
5. on a landing, report the page's first paint as the app's page component does once the
   browser has painted (`cblab/ui/frame/page.py`: a first page leaves the sidebar's widgets out
   until then), and read that run too: the landing is both runs, as a browser's is.

Every run's messages are counted in bytes (`run_bytes`: the websocket payloads from the rerun's
send to its `script_finished`; Streamlit compresses its websocket only with
`server.enableWebsocketCompression`, off by default, so these are the bytes on the wire, less
framing). It does not run the page's JavaScript: the stage (a custom component) never reports
its step, which in a browser adds a rerun once playback or a Check moves it. Loopback only;
every wait is bounded (`timeout`), and so is a message (64 MiB).
"""

from __future__ import annotations

import asyncio
import collections
import http.cookiejar
import json
import time
import urllib.parse
import urllib.request
import uuid

from streamlit.components.v2.bidi_component.main import _make_trigger_id
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ClientState_pb2 import ContextInfo
from streamlit.proto.Common_pb2 import FileURLsRequest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import connect

from benchmarks.message_cache import MessageCache
from benchmarks.uploads import put_file, uploader_state
from benchmarks.widget_values import given_state, held_state, widget_id

LOOPBACK = ("127.0.0.1", "localhost", "::1")
MAX_MESSAGE = 64 * 1024 * 1024
EARLY = ForwardMsg.ScriptFinishedStatus.FINISHED_EARLY_FOR_RERUN


def check_loopback(url: str) -> str:
    """`url` without a trailing slash; a host other than loopback is refused."""
    if urllib.parse.urlsplit(url).hostname not in LOOPBACK:
        raise ValueError(f"{url}: the classroom client talks to loopback servers only ({', '.join(LOOPBACK)})")
    return url.rstrip("/")


class Session:
    """One learner's page on the server at `base_url` (opened at `query`, e.g. `lesson=1.1`)."""

    def __init__(self, base_url: str, query: str = "", timeout: float = 120.0):
        self.base = check_loopback(base_url)
        self.query_string, self.timeout = query, timeout
        self.cookies = http.cookiejar.CookieJar()
        self._http = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.cookies))
        self.session_id = self.page_hash = ""
        self.elements: dict[str, object] = {}  # widget id -> element, as shown by the last finished run
        self.received: list[ForwardMsg] = []  # every message of the last finished run (refs resolved)
        self.run_bytes = 0  # the bytes of the last finished run's messages, as sent
        self._bytes = 0  # those of the run under way so far
        self._values: dict[str, object] = {}  # widget id -> the state the page holds (sent on every rerun)
        self.sent: collections.deque[bytes] = collections.deque(maxlen=64)  # the last rerun requests, as sent
        self._run: list[ForwardMsg] = []
        self._cache = MessageCache()
        self._waiting: dict[str, asyncio.Future] = {}
        self._socket = self._reader = None

    def cookie(self, name: str) -> str | None:
        return next((c.value for c in self.cookies if c.name == name), None)

    def get(self, path: str) -> bytes:
        with self._http.open(self.base + path, timeout=self.timeout) as response:
            return response.read()

    async def land(self) -> float:
        """Open the page and run the script, and again once the page component reports the first paint (as it
        does when it asks to): seconds from the page request to the last `script_finished`; `received` and
        `run_bytes` hold both runs."""
        start = time.perf_counter()
        for path in (f"/?{self.query_string}", "/_stcore/health", "/_stcore/host-config"):
            await asyncio.to_thread(self.get, path)
        xsrf = self.cookie("_streamlit_xsrf") or "PLACEHOLDER_AUTH_TOKEN"
        cookies = "; ".join(f"{c.name}={c.value}" for c in self.cookies)
        self._socket = await connect(
            "ws" + self.base[len("http") :] + "/_stcore/stream",
            subprotocols=["streamlit", xsrf],
            origin=self.base,
            additional_headers={"Cookie": cookies} if cookies else None,
            max_size=MAX_MESSAGE,
            ping_interval=None,
            proxy=None,
            open_timeout=self.timeout,
        )
        self._reader = asyncio.create_task(self._read())
        await self.rerun()
        report = self.paint_report()
        if report is not None:
            first, first_bytes = self.received, self.run_bytes
            await self.rerun(events=(report, "painted"))
            self.received, self.run_bytes = first + self.received, first_bytes + self.run_bytes
        return time.perf_counter() - start

    def paint_report(self) -> str | None:
        """The page component's trigger widget if it waits to report the page's first paint (its data's
        `report`), else None."""
        for wid, element in self.elements.items():
            if wid.endswith("-page") and element.WhichOneof("type") == "bidi_component":
                data = json.loads(element.bidi_component.json or "{}")
                if isinstance(data, dict) and data.get("report"):
                    return _make_trigger_id(wid, "events")
        return None

    def widget(self, key: str) -> str:
        """The id of the widget with user key `key` on the page (its id ends in `-<key>`)."""
        found = [wid for wid in self.elements if wid.endswith(f"-{key}")]
        if len(found) != 1:
            raise LookupError(f"{len(found)} widgets keyed {key!r} on the page; keys shown: {self.widget_keys()}")
        return found[0]

    def widget_keys(self) -> list[str]:
        return sorted(wid.rsplit("-", 1)[-1] for wid in self.elements)

    async def set_value(self, key: str, value) -> float:
        """Type or choose `value` in the widget keyed `key`; seconds to `script_finished`."""
        wid = self.widget(key)
        self._values[wid] = given_state(self.elements[wid], value)
        return await self.rerun()

    async def click(self, key: str) -> float:
        """Press the button keyed `key`; seconds from the send to `script_finished`."""
        return await self.rerun(trigger=self.widget(key))

    async def upload(self, key: str, name: str, data: bytes) -> int:
        """Upload a file to the uploader keyed `key` as the frontend does: ask the session for an upload
        URL, PUT the file there, then rerun with the uploader's new state. Returns the PUT's HTTP status
        (204 stored; 400 when the request reached a server that does not hold this session)."""
        request_id = uuid.uuid4().hex
        reply = self._expect(request_id)
        files = BackMsg(file_urls_request=FileURLsRequest(request_id=request_id, file_names=[name]))
        files.file_urls_request.session_id = self.session_id
        await self._socket.send(files.SerializeToString())
        urls = (await asyncio.wait_for(reply, self.timeout)).file_urls_response.file_urls[0]
        xsrf = self.cookie("_streamlit_xsrf") or ""
        status = await asyncio.to_thread(put_file, self._http, self.base + urls.upload_url, name, data, xsrf)
        if status == 204:
            wid = self.widget(key)
            self._values[wid] = uploader_state(wid, name, len(data), urls)
            await self.rerun()
        return status

    async def rerun(self, trigger: str | None = None, events: tuple[str, str] | None = None) -> float:
        """Send `rerun_script` with every widget's state (and one button's trigger, or one custom component's
        event: its trigger widget and the event's name); seconds to `script_finished`."""
        message = BackMsg()
        state = message.rerun_script
        state.query_string, state.page_script_hash = self.query_string, self.page_hash
        state.widget_states.widgets.extend(self._values.values())
        if trigger is not None:
            state.widget_states.widgets.add(id=trigger, trigger_value=True)
        if events is not None:
            payload = json.dumps([{"event": events[1], "value": True}], separators=(",", ":"))  # (as a browser)
            state.widget_states.widgets.add(id=events[0], json_trigger_value=payload)
        state.cached_message_hashes.extend(self._cache.hashes())
        state.context_info.CopyFrom(
            ContextInfo(timezone="UTC", timezone_offset=0, locale="en-US", url=self.base + "/", color_scheme="light")
        )
        state.context_info.is_embedded = False
        finished = self._expect("script_finished")
        start = time.perf_counter()
        self._bytes = 0
        self.sent.append(message.SerializeToString())
        await self._socket.send(self.sent[-1])
        await asyncio.wait_for(finished, self.timeout)
        return time.perf_counter() - start

    def _expect(self, what: str) -> asyncio.Future:
        self._waiting[what] = future = asyncio.get_running_loop().create_future()
        return future

    def _answer(self, what: str, value) -> None:
        future = self._waiting.pop(what, None)
        if future is not None and not future.done():
            future.set_result(value)

    async def _read(self) -> None:
        try:
            async for payload in self._socket:
                self._bytes += len(payload)
                self._handle(self._cache.resolve(ForwardMsg.FromString(payload)))
        except Exception as exc:  # the connection dropped: fail whoever waits, with the reason
            for future in self._waiting.values():
                if not future.done():
                    future.set_exception(ConnectionError(f"session {self.session_id or '?'}: {exc!r}"))
            raise

    def _handle(self, msg: ForwardMsg) -> None:
        kind = msg.WhichOneof("type")
        if kind == "new_session":  # a script run starts
            self._run = []
            self.session_id = msg.new_session.initialize.session_id or self.session_id
            self.page_hash = msg.new_session.page_script_hash
            self._cache.max_age = msg.new_session.config.max_cached_message_age
        self._run.append(msg)
        if kind == "page_info_changed":
            self.query_string = msg.page_info_changed.query_string
        elif kind == "file_urls_response":
            self._answer(msg.file_urls_response.response_id, msg)
        elif kind == "script_finished" and msg.script_finished != EARLY:
            self.received, self._run = self._run, []
            self.run_bytes = self._bytes
            shown = [m.delta.new_element for m in self.received if m.delta.HasField("new_element")]
            self.elements = {widget_id(e): e for e in shown if widget_id(e)}
            held = ((wid, held_state(element, self._values.get(wid))) for wid, element in self.elements.items())
            self._values = {wid: value for wid, value in held if value is not None}
            self._cache.script_finished()
            self._answer("script_finished", msg)

    def exceptions(self) -> list[str]:
        """The messages of any exception the last run showed (a traceback on the page)."""
        return [
            m.delta.new_element.exception.message
            for m in self.received
            if m.HasField("delta") and m.delta.new_element.WhichOneof("type") == "exception"
        ]

    async def close(self) -> None:
        if self._socket is not None:
            await self._socket.close()
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
