"""judge: the LLM judge. So far the label mapping: each label a judge used -> supported,
unsupported or abstained (rubrics, prompts and the judge runs come next).

May import accounts/, llm, stats/, store/ and errors.
"""
