"""Wrong passwords slow down, never lock out: the waits of a name, a browser and an address.

A try must wait (refused unchecked, the wait said) when the browser it comes from has failed
too often, or when that browser has failed at all and the name it tries has; an address waits
after many more failures from it. A browser that has not failed always has the right password
checked, so no state an anonymous visitor can set keeps a lead out from another browser;
failures count for DECAY only, and a lead can clear a name's waits (`annotate user unlock
NAME`, the Users page). Every wait starts at FIRST_WAIT and doubles up to LONGEST_WAIT.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from annotate.store import Store
from annotate.store import users as sql

FREE_TRIES = 5  # wrong passwords for one name (or from one browser) before each next waits
ADDRESS_FREE_TRIES = 20  # from one address (many people may share it), whatever the browser
FIRST_WAIT = timedelta(seconds=30)  # then doubling with every further wrong password
LONGEST_WAIT = timedelta(minutes=15)
DECAY = timedelta(hours=1)  # a wrong password older than this no longer counts


@dataclass(frozen=True)
class Try:
    """Where a password comes from: the browser (a random id per browser session; None from
    the command line, which counts as one that has failed) and the network address."""

    browser: str | None = None
    address: str | None = None


def waited(count: int, latest: datetime | None, free: int, now: datetime) -> timedelta | None:
    """What is left of the wait after `count` failures, the latest at `latest`, if any."""
    if count < free or latest is None:
        return None
    left = latest + min(FIRST_WAIT * 2 ** (count - free), LONGEST_WAIT) - now
    return left if left > timedelta(0) else None


def try_wait(store: Store, name: str, origin: Try, now: datetime) -> tuple[str, timedelta] | None:
    """(what is slowed, how long) when this try must wait; None when its password is checked."""
    since = now - DECAY
    browser = sql.failures_from(store, name, "browser", origin.browser, since)
    failed = origin.browser is None or browser[0] > 0
    checks = [
        (f"from this browser for {name!r}", browser, FREE_TRIES, origin.browser is not None),
        (f"for {name!r}", sql.failures_from(store, name, "name", name, since), FREE_TRIES, failed),
        (
            "from this address",
            sql.failures_from(store, name, "address", origin.address, since),
            ADDRESS_FREE_TRIES,
            origin.address is not None,
        ),
    ]
    for what, (count, latest), free, applies in checks:
        left = waited(count, latest, free, now) if applies else None
        if left:
            return what, left
    return None


def say_duration(wait: timedelta) -> str:
    seconds = max(int(wait.total_seconds() + 0.999), 1)
    return f"{seconds} s" if seconds < 120 else f"{(seconds + 59) // 60} min"
