"""rubrics: our own LLM judge and the lead's loop. Rubric versions, the prompt, the judge runner
(sync and Message Batches), the offline baseline judge, the held-out split, the calibration card
and its fingerprint, YAML + Markdown export and import.

May import agreement/ and everything below it; never annotate.rates (a sibling layer).
"""
