"""sampling: the sampling frame, allocation (proportional, equal, Neyman, explicit), the seeded
stratified draw with its inclusion probabilities, plans, top-ups and the tables pages show.

May import accounts/, judge/ (the label mapping: each stratum's judge rate, for Neyman),
store/ and errors.
"""
