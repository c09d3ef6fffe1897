"""judge: our own LLM judge, in one package. Its layers, low to high:

- labels.py: each label a judge used -> supported, unsupported or abstained (the mapping every
  judge's verdicts go through, ours or imported); default.py: which judge a page or command
  uses when none is named. May import accounts/, stats/, store/ and errors.
- llm.py: the one seam to Anthropic (client, calls, retries, prices, fences re-exported).
- rubrics/: rubric versions, the prompt, the runner (sync and Message Batches), the offline
  baseline, the held-out split, the calibration card, compare, export and import.

Nothing is imported here, so `annotate.judge.llm` loads without the store (the runtime check).
"""
