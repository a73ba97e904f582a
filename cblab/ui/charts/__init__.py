"""The charts over a run: timeline and metrics (time_charts.py, kv_charts.py, prefix_charts.py,
chart_parts.py), the batch-size sweep, the replicas and Compare."""
