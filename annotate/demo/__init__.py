"""demo: the deterministic sample-data generator (`annotate demo-data`, `python -m annotate.demo`)
and the demo labels loaded into a fresh store.

May import ingest/, store/ and traces/; nothing imports it but cli/.
"""
