"""Migration 0025: the draws of active (judge-guided) samples (annotate.store.active)."""

# one row per draw of an active sample, what its probabilities followed
ACTIVE_DRAWS = """
CREATE TABLE active_draws (
    sample VARCHAR NOT NULL,
    draw INTEGER NOT NULL,
    judge VARCHAR NOT NULL,
    basis VARCHAR NOT NULL,           -- what the probabilities followed, e.g. 'score 900, gold 100'
    budget DOUBLE NOT NULL,           -- expected labels: sum of pi, fixed before the draw
    floor_weight DOUBLE NOT NULL,     -- the uniform floor's mixing weight, chosen by the planner
    hash_rule VARCHAR NOT NULL
);
"""
