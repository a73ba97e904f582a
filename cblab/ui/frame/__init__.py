"""The page's frame: the header and tabs (layout.py, tabs.py), the lesson box that gathers the course's
pieces (lesson_view.py, lesson_extras.py), the page component (page.py), and what makes lessons ahead
(prefetch.py, precompute.py)."""
