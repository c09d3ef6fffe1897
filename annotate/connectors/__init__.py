"""Clients of tracing servers (Arize Phoenix, MLflow): pull their traces into the store, draw a
sample from a server's trace list, and push the reviewers' gold, the judge's verdicts and the
calibration card back. Each server's client library is an optional extra, imported only here.

May import ingest/, sampling/, agreement/, rates/, rubrics/, store/; never streamlit.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from annotate.errors import UsageError

EXTRAS = {"phoenix": "phoenix.client", "mlflow": "mlflow.client"}
KINDS = tuple(EXTRAS)


class MissingExtraError(UsageError):
    """The client library of a tracing server is not installed."""


def client_module(kind: str) -> ModuleType:
    """The server's client library, or an error naming the extra that installs it."""
    if kind not in EXTRAS:
        raise UsageError(f"unknown tracing server {kind!r}; use one of: {', '.join(KINDS)}")
    try:
        return importlib.import_module(EXTRAS[kind])
    except ImportError as exc:
        raise MissingExtraError(
            f"talking to a {kind} server needs its client library, which is not installed "
            f"({exc}); install the extra: pip install -e '.[{kind}]'"
        ) from exc
