"""What the learner sets: the sidebar's controls (controls.py), their table (settings.py) and the URL that
holds them (url.py)."""
