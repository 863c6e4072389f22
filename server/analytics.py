"""gradio's traffic analytics, switched off: the app serves no monitoring dashboard, so it pays nothing per event
for one.

After every event it runs, gradio's queue rebuilt a pandas DataFrame of its last 10,000 events and computed their
percentiles (Queue.compute_analytics_summary, in a worker thread, mostly holding the GIL): 7-12 ms of CPU per event,
20-38% of the server's Python time under a classroom of 20 asking for heatmaps (py-spy, bench/RESULTS.md, issue 30),
all of it taken from the requests themselves. The summary and the records it is made of serve only gradio's
`/monitoring` dashboard, which gradio leaves open unless told otherwise. So launch gets `enable_monitoring=False`
(MONITORING: its routes answer 403), and `switch_off` keeps gradio's empty summary as it is and no event records.
"""
from __future__ import annotations

MONITORING = {"enable_monitoring": False}  # demo.launch's setting: no /monitoring dashboard or summary


def switch_off(queue) -> None:
    """`queue` (gradio's, after demo.queue()) computes no summary and keeps no record of its events: its summary
    is the one it holds (empty: none was ever computed), and it keeps 0 event records (each push adds one and drops
    the oldest while more than that are kept)."""
    summary = queue.cached_event_analytics_summary
    queue.compute_analytics_summary = lambda records: summary
    queue.ANALYTICS_MAX_EVENTS = 0
