"""demo: the deterministic sample-data generator (`annotate demo-data`, `python -m annotate.demo`)
and the demo labels and adjudications loaded into a fresh store.

May import ingest/, labelling/, store/ and traces/; nothing imports it but cli/.
"""
