"""Practice: the checker's log beside the reference (pair_view.py), Spot the bug and the slow zoo, and the
stories that explain each bug."""
