"""Once per app process, after the first page a lead or an auditor opens (whichever it is), the
app imports in the background what the statistics pages (Agreement, Calibration, Rates) would
otherwise make their first visitor wait for: altair and the pages' chart and statistics modules
(0.3-0.4 s of a first visit to Rates that no other page preceded), scipy's special functions
(the bootstrap's and the t quantiles) and krippendorff. ppi-python, 3 s of a first visit to
Rates on the shared two-core machine (numba, scikit-learn), is no longer imported at run time
(annotate.stats.ppi), nor scipy.stats (1 s, ordinal scales only). A reviewer's pages never
start it: Label needs none of these.

Imports only: no statistic is computed ahead, and a failed import is left for the page that
needs it to report.
"""

from __future__ import annotations

import importlib
import threading
from typing import Any

from widgets import ahead

# what the statistics pages import (their charts: altair), then what the statistics import on
# first use (annotate.stats: intervals, alpha)
HEAVY = (
    "altair",
    "annotate.report.charts",
    "annotate.rates.charts",
    "annotate.rates.view",
    "annotate.agreement.reliability",
    "annotate.agreement.calibration",
    "scipy.special",
    "krippendorff",
)
_STARTED = threading.Event()


def _import_all() -> None:
    for name in HEAVY:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001, S112 - the page that needs it reports the failure
            continue


def warm_up_statistics() -> None:
    """Start the imports in a daemon thread, the first time only (a page's last act, after it
    has drawn: app.py for a lead's or an auditor's page, Home when its worker did not start)."""
    if _STARTED.is_set():
        return
    _STARTED.set()
    threading.Thread(target=_import_all, name="annotate-warm-up", daemon=True).start()


def after_page(user: Any) -> None:
    """app.py's last act on every page: for a lead or an auditor, the imports (once per
    process), unless the lead pages' worker is computing now (it imports them itself, and two
    threads at once slowed both)."""
    if user is not None and user.role in ("lead", "auditor") and not ahead.running():
        warm_up_statistics()
