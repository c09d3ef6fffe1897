"""Every act has a name: the actor of an act, and the log an auditor reads.

An act (import, sample, top-up, claims run, assignment, adjudication, flag, setting,
report, account change, export) is recorded in the same transaction as its work; sign-ins,
sign-outs and wrong passwords are read from the sessions' own rows.
"""

from __future__ import annotations

import getpass
import os
from dataclasses import dataclass
from typing import Any

from annotate.store import Store
from annotate.store import activity as sql

KINDS = (
    "import",
    "import_labels",
    "sample",
    "top_up",
    "claims",
    "assignment",
    "adjudication",
    "flag",
    "setting",
    "report",
    "account",
    "export",
    "verdict",
    "skip",
    "rubric",
    "judge_run",
    "canary",
    "claim_revision",
    "question",
    "answer",
    "sign_in",
    "sign_out",
    "sign_in_failed",
)


@dataclass(frozen=True)
class Actor:
    """Who acts: a signed-in account in the app, `--as NAME` or the OS user on the CLI."""

    name: str
    origin: str = "app"  # app | cli
    role: str | None = None  # `--as NAME`: NAME's role, which must allow each act (may_act)

    def __str__(self) -> str:
        return self.name


# What an account may record when the CLI acts in its name (`--as`); a lead, anything; a
# reviewer nothing: reviewers label in the app and may not read the CLI's reports (cli_actor).
# The app's pages decide who may open them (ui.require_role); this holds the CLI to the same.
ROLE_ACTS = {"auditor": frozenset({"report", "export"})}


def may_act(who: Actor, kind: str) -> None:
    """Refuse an act that `--as NAME` names an account of the wrong role for. Acts that cost
    time or money (an import, a judge run, claim extraction) ask before they start."""
    from annotate.errors import UsageError

    if who.role is None or who.role == "lead" or kind in ROLE_ACTS.get(who.role, ()):
        return
    allowed = sorted(ROLE_ACTS.get(who.role, ()))
    raise UsageError(
        f"--as {who.name}: {who.name!r} is {'an' if who.role[0] in 'aeiou' else 'a'} "
        f"{who.role}, whose name may not be on {kind} acts"
        + (f" (only on {' and '.join(allowed)} acts)" if allowed else "")
        + "; use --as with a lead's name, or leave --as out to act as the OS user"
    )


def os_actor() -> Actor:
    """The CLI's actor when no --as is given: the operating-system user."""
    try:
        name = getpass.getuser()
    except (KeyError, OSError):  # no passwd entry (some containers)
        name = os.environ.get("USER") or f"uid {os.getuid()}"
    return Actor(name, "cli")


def as_actor(who: Actor | str | None) -> Actor:
    """Library callers may pass a bare name (the app's signed-in user) or nothing (the OS user)."""
    if isinstance(who, Actor):
        return who
    if who is None:
        return os_actor()
    return Actor(who, "app")


def record_act(
    store: Store,
    who: Actor | str | None,
    kind: str,
    subject: str | None = None,
    **detail: Any,
) -> None:
    """Append one activity row; call inside the act's own transaction."""
    actor = as_actor(who)
    may_act(actor, kind)
    sql.insert_act(store, actor.name, actor.origin, kind, subject, detail)


def activity(
    store: Store, actor: str | None = None, kind: str | None = None, limit: int | None = None
) -> list[dict[str, Any]]:
    """The log, oldest first, optionally for one actor and one kind of act."""
    return sql.acts(store, actor or None, kind or None, limit)


def activity_filters(store: Store) -> tuple[list[str], list[str]]:
    """(actors, kinds) that occur in the log, for filter widgets."""
    return sql.act_actors(store), sql.act_kinds(store)
