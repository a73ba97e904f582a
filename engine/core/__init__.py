"""The engine itself: the step loop, the scheduler, requests, stop matching, the models, the event log.

This is the part to read to learn continuous batching; start with `engine.py`. It
imports nothing from the rest of the project.
"""
