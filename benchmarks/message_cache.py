"""The client's cache of large ForwardMsgs, kept as Streamlit's frontend keeps it.

A message the server marks `cacheable` (a large element, such as the stage with its frames)
is kept by its hash. Every rerun tells the server which hashes the client holds
(`cached_message_hashes`), and the server then sends such a message again as a `ref_hash`
alone. A message not used for more than `max_age` finished runs (the server's
`global.maxCachedMessageAge`, told in `new_session`) is dropped, as the frontend drops it.
"""

from __future__ import annotations

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg


class MessageCache:
    def __init__(self, max_age: int = 2):
        self.max_age = max_age
        self.runs = 0  # finished script runs so far
        self._messages: dict[str, tuple[ForwardMsg, int]] = {}  # hash -> (message, the run it was last used in)

    def hashes(self) -> list[str]:
        return list(self._messages)

    def resolve(self, msg: ForwardMsg) -> ForwardMsg:
        """`msg`, or the cached message a `ref_hash` stands for (with the reference's metadata)."""
        if msg.WhichOneof("type") == "ref_hash":
            if msg.ref_hash not in self._messages:
                raise LookupError(f"the server sent a reference to a message the client does not hold: {msg.ref_hash}")
            cached = ForwardMsg()
            cached.CopyFrom(self._messages[msg.ref_hash][0])
            cached.metadata.CopyFrom(msg.metadata)
            self._messages[msg.ref_hash] = (self._messages[msg.ref_hash][0], self.runs)
            return cached
        if msg.metadata.cacheable and msg.hash and msg.hash not in self._messages:
            self._messages[msg.hash] = (msg, self.runs)
        return msg

    def script_finished(self) -> None:
        """Count a finished run and drop the messages unused for more than `max_age` runs."""
        self.runs += 1
        self._messages = {h: (m, used) for h, (m, used) in self._messages.items() if self.runs - used <= self.max_age}
