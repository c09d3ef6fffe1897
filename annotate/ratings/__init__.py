"""Ratings of whole responses on a rubric's ordinal criteria (relevance, coherence, 1-5):
recording and importing them, agreement between reviewers, the judge against the reviewers'
mean, and design-weighted means per slice. May import rubrics, labelling, stats and store."""
