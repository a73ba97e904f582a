"""Reading a run's event log: any step's state (`replay`), metrics and the cost model, narration.

Everything here reads the log alone, so a loaded JSONL file is analysed exactly like a
live run.
"""
