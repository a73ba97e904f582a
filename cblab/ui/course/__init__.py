"""The course: lessons and predictions (course.py), and what a lesson box shows beside the run: the reveal
kept across settings, real servers' callouts, measured figures, the cache curve, the invariant view."""
