"""sampling: the sampling frame, allocation (proportional, equal, Neyman, explicit), the seeded
stratified draw with its inclusion probabilities, plans and top-ups.

May import accounts/, judge/ (the label mapping, for Neyman), store/ and errors.
"""
