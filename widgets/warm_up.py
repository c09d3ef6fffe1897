"""Once per app process, a lead's Home imports in the background what the statistics pages
(Agreement, Calibration, Rates) would otherwise make their first visitor wait for: ppi-python
alone took 3 s of a first visit to Rates on the shared two-core machine (numba, scikit-learn).

Imports only: no statistic is computed ahead, and a failed import is left for the page that
needs it to report.
"""

from __future__ import annotations

import importlib
import threading

# the heavy imports the statistics make on first use (annotate.stats: ppi, alpha, intervals)
HEAVY = ("scipy.special", "scipy.stats", "krippendorff", "ppi_py")
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
