"""Once per app process, a lead's Home imports in the background what the statistics pages
(Agreement, Calibration, Rates) would otherwise make their first visitor wait for: scipy's
special functions (the bootstrap's and the t quantiles) and krippendorff. ppi-python, 3 s of a
first visit to Rates on the shared two-core machine (numba, scikit-learn), is no longer
imported at run time (annotate.stats.ppi), nor scipy.stats (1 s, ordinal scales only).

Imports only: no statistic is computed ahead, and a failed import is left for the page that
needs it to report.
"""

from __future__ import annotations

import importlib
import threading

# the imports the statistics make on first use (annotate.stats: intervals, alpha)
HEAVY = ("scipy.special", "krippendorff")
_STARTED = threading.Event()


def _import_all() -> None:
    for name in HEAVY:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001, S112 - the page that needs it reports the failure
            continue


def warm_up_statistics() -> None:
    """Start the imports in a daemon thread, the first time only (the Home page's last act,
    after it has drawn)."""
    if _STARTED.is_set():
        return
    _STARTED.set()
    threading.Thread(target=_import_all, name="annotate-warm-up", daemon=True).start()
