"""The command line, `python -m engine ...`: the other front end beside the app (`app.py`, `cblab/ui/`)."""
