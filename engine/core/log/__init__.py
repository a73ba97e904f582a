"""The event log: what one run did, step by step, and everything that reads or writes it.

`events.py` names the event kinds and the finish reasons; `event_log.py` is the log itself
(columns of ints, one row an event, with the request table) and the one place that knows
how its columns are packed; `jsonl.py` writes and strictly reads it as JSON Lines;
`dataframe.py` turns it into a pandas DataFrame. A log replays the whole run without the
engine (`engine/analysis/replay.py`).
"""
