"""The `annotate user` and `annotate assign` commands: parsing and printing only.

Passwords are read from a prompt (no echo) or from standard input, never from an argument.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from typing import Any

from annotate.accounts.activity import KINDS, activity, may_act
from annotate.accounts.users import (
    ROLES,
    AuthError,
    add_user,
    list_users,
    set_active,
    set_password,
    unlock,
)
from annotate.cli.console import LIMIT, SEED, shown
from annotate.errors import counted
from annotate.labelling.assignment import assign


def add_people_commands(commands: Any, common: Any, writer: Any, emit: Any, say: Any) -> None:
    user = commands.add_parser("user", help="manage accounts")
    actions = user.add_subparsers(dest="action", required=True)
    adding = actions.add_parser(
        "add", help="add an account; the password is read from a prompt or stdin"
    )
    adding.add_argument("name", help="the account's name: 1-64 characters, no spaces")
    adding.add_argument("--role", choices=ROLES, required=True, help="what the account may do")
    common(adding, json_flag=False)
    adding.set_defaults(run=lambda args: run_user_add(args, writer, say), creates_store=True)
    for action, active in (("deactivate", False), ("activate", True)):
        toggle = actions.add_parser(action, help=f"{action} an account (its labels stay)")
        toggle.add_argument("name", help="the account's name")
        common(toggle, json_flag=False)
        toggle.set_defaults(
            run=lambda args, active=active: run_user_active(args, writer, say, active)
        )
    password = actions.add_parser(
        "password", help="set a new password (read from a prompt or stdin); open sessions end"
    )
    password.add_argument("name", help="the account's name")
    common(password, json_flag=False)
    password.set_defaults(run=lambda args: run_user_password(args, writer, say))
    unlocking = actions.add_parser(
        "unlock", help="clear the waits that wrong passwords put on an account's sign-in"
    )
    unlocking.add_argument("name", help="the account's name")
    common(unlocking, json_flag=False)
    unlocking.set_defaults(run=lambda args: run_user_unlock(args, writer, say))
    listing = actions.add_parser("list", help="every account")
    common(listing)
    listing.set_defaults(run=lambda args: run_user_list(args, writer, emit))

    acts = commands.add_parser("activity", help="who did what and when, oldest first")
    acts.add_argument("--user", help="only this user's acts")
    acts.add_argument("--kind", choices=KINDS, help="only this kind of act")
    acts.add_argument("--limit", type=LIMIT, help="at most this many rows")
    common(acts)
    acts.set_defaults(run=lambda args: run_activity(args, writer, emit))

    assigning = commands.add_parser("assign", help="assign each sampled trace to k reviewers")
    assigning.add_argument("--sample", required=True, help="the sample whose traces are assigned")
    assigning.add_argument("--reviewers", required=True, help="comma-separated account names")
    assigning.add_argument(
        "--per-trace", type=int, default=2, help="reviewers per overlapping trace (default 2)"
    )
    assigning.add_argument(
        "--overlap-share",
        type=float,
        default=1.0,
        help="share of traces given to --per-trace reviewers; the rest to one (default 1.0)",
    )
    assigning.add_argument("--seed", type=SEED, default=0, help="seed of each queue's order")
    common(assigning)
    assigning.set_defaults(run=lambda args: run_assign(args, writer, emit, say))


def _may_change_accounts(args: argparse.Namespace, writer: Any) -> None:
    """`--as` of an account that may not change accounts is refused before the password is
    asked for; the store is not held open while somebody types. Without --as, the OS user."""
    if getattr(args, "as_user", None) is None:
        return
    with writer(args):
        may_act(args.actor, "account")


def read_password(prompt: str = "Password: ") -> str:
    if sys.stdin.isatty():
        first = getpass.getpass(prompt)
        if getpass.getpass("Repeat: ") != first:
            raise AuthError("the two passwords differ")
        return first
    return sys.stdin.readline().rstrip("\r\n")  # a line ending from any system


def run_user_add(args: argparse.Namespace, writer: Any, say: Any) -> int:
    _may_change_accounts(args, writer)
    password = read_password()
    with writer(args) as store:
        user = add_user(store, args.name, args.role, password, actor=args.actor)
    say(f"added {user.name} ({user.role})")
    return 0


def run_user_active(args: argparse.Namespace, writer: Any, say: Any, active: bool) -> int:
    with writer(args) as store:
        name = set_active(store, args.name, active, actor=args.actor)
    say(f"{name} is now {'active' if active else 'deactivated'}")
    return 0


def run_user_unlock(args: argparse.Namespace, writer: Any, say: Any) -> int:
    with writer(args) as store:
        name = unlock(store, args.name, actor=args.actor)
    say(f"{name} can sign in again without waiting; earlier wrong passwords no longer count")
    return 0


def run_user_password(args: argparse.Namespace, writer: Any, say: Any) -> int:
    _may_change_accounts(args, writer)
    password = read_password("New password: ")
    with writer(args) as store:
        name = set_password(store, args.name, password, actor=args.actor)
    say(f"{name} has a new password; their open sessions have ended")
    return 0


def run_activity(args: argparse.Namespace, writer: Any, emit: Any) -> int:
    with writer(args) as store:
        rows = activity(store, args.user, args.kind, args.limit)
    if args.json:
        emit({"activity": rows})
        return 0
    for row in rows:
        detail = shown(", ".join(f"{k}={v}" for k, v in row["detail"].items()))
        print(
            f"{row['acted_at']:%Y-%m-%d %H:%M:%S}\t{row['actor']}\t{row['origin']}\t"
            f"{row['kind']}\t{shown(row['subject'] or '')}\t{detail}"
        )
    return 0


def run_user_list(args: argparse.Namespace, writer: Any, emit: Any) -> int:
    with writer(args) as store:
        users = list_users(store)
    rows = [
        {"name": u.name, "role": u.role, "active": u.active, "external": u.external} for u in users
    ]
    if args.json:
        emit({"users": rows})
    else:
        for row in rows:
            print(
                f"{row['name']}\t{row['role']}\t{'active' if row['active'] else 'inactive'}"
                + ("\texternal" if row["external"] else "")
            )
    return 0


def run_assign(args: argparse.Namespace, writer: Any, emit: Any, say: Any) -> int:
    with writer(args) as store:
        report = assign(
            store,
            args.sample,
            args.reviewers.split(","),
            args.per_trace,
            args.overlap_share,
            args.seed,
            assigned_by=args.actor,
        )
    if args.json:
        emit(report.as_json())
    say(
        f"{report.sample}: added {counted(report.added, 'assignment')}, released "
        f"{report.released}; load {report.load}"
    )
    return 0
