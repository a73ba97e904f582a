"""The checker's scale section: how a solution's cost per token grows along four axes, beside the
project's engine (see `section.py`)."""
