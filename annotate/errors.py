"""The one error family every caller may catch (anything else is a bug); `counted`, the
count-and-noun of every message: "1 claim", "2 claims", "60 strata"; `slice_label`, the
words for a slice in every message and table: "feature=billing_qa, model=m-1", "overall";
and `stratum_label`, a stored stratum key's: "billing_qa | financial"."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


class AnnotateError(Exception):
    """Base of every error a user can act on; the message says what to do."""


class StoreError(AnnotateError):
    """A DuckDB failure, translated at the store boundary."""


class StoreLockedError(StoreError):
    """Another process holds the DuckDB file for writing."""

    def __init__(self, path: str, holder: str) -> None:
        self.path = path
        self.holder = holder
        super().__init__(
            f"{path} is open for writing in another process ({holder}). "
            "Stop that process (for example the running app: Ctrl-C in its terminal), "
            "or import through the app's Import page instead."
        )


class InputError(AnnotateError):
    """A whole input file cannot be read (empty, binary, unknown format)."""


class Interrupted(AnnotateError):
    """The user stopped the work (Ctrl-C): the step in progress was rolled back."""


class InterruptedAfterCommit(Interrupted):
    """Ctrl-C came as the work was committed, or after: it is stored whole; the message says
    what is stored."""


class UsageError(AnnotateError):
    """A command or function was called with arguments that cannot work."""


IRREGULAR = {"stratum": "strata"}


def counted(number: int, noun: str) -> str:
    """`number` and `noun` in the number it takes: one is singular, every other count
    (0, 2, 1,000) plural. `noun` is the singular ("trace", "stratum")."""
    plural = IRREGULAR.get(noun, noun + "s")
    return f"{number:,} {noun if number == 1 else plural}"


def slice_label(values: Mapping[str, Any]) -> str:
    """A slice's column=value pairs, or "overall" for the slice of everything."""
    return ", ".join(f"{k}={v}" for k, v in values.items()) or "overall"


def stratum_label(key: str) -> str:
    """A stratum's stored JSON key as `sample` prints strata: `billing_qa | financial`."""
    return " | ".join("(none)" if value is None else str(value) for value in json.loads(key))
