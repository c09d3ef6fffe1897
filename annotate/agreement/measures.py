"""Which statistics the agreement document holds, each built from a rating table and its
scale, and the scale of a level: the rubric's categories, not only those used."""

from __future__ import annotations

from collections.abc import Callable

from annotate.stats import coefficients as stats
from annotate.stats.gold import SUPPORTED, UNSUPPORTED, Evidence

# Each takes the table and its scale (the rubric's categories; None: those used). Only the
# coefficients whose chance agreement counts categories (Gwet's, Brennan-Prediger) use it.
Build = Callable[..., stats.Measure]
NOMINAL_STATS: dict[str, Build] = {
    "percent_agreement": lambda t, scale=None: stats.percent_agreement_measure(t),
    "krippendorff_alpha": lambda t, scale=None: stats.krippendorff_measure(t),
    "fleiss_kappa": lambda t, scale=None: stats.fleiss_measure(t),
    "gwet_ac1": lambda t, scale=None: stats.gwet_measure(t, scale=scale),
    "brennan_prediger": lambda t, scale=None: stats.brennan_prediger_measure(t, scale=scale),
    "conger_kappa": lambda t, scale=None: stats.conger_measure(t),
}
SCORE_STATS: dict[str, Build] = {  # need numeric ratings (scores)
    "krippendorff_alpha_ordinal": lambda t, scale=None: stats.krippendorff_measure(t, "ordinal"),
    "krippendorff_alpha_interval": lambda t, scale=None: stats.krippendorff_measure(t, "interval"),
    "gwet_ac2_linear": lambda t, scale=None: stats.gwet_measure(t, "linear", scale),
    "gwet_ac2_quadratic": lambda t, scale=None: stats.gwet_measure(t, "quadratic", scale),
}


def scale_of(evidence: Evidence, level: str, scale: str) -> list[str]:
    """The rubric's categories at this level and scale: its labels (full), the outcomes they
    map to (binary claims, excluded among them), supported and unsupported (responses)."""
    if level == "response":
        return [SUPPORTED, UNSUPPORTED]
    if scale == "full":
        return list(evidence.binary)
    return list(dict.fromkeys(o for o in evidence.binary.values() if o is not None))
