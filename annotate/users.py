"""Local accounts: roles, scrypt password hashes, login, deactivation. No default password exists.

Roles: reviewer (labels their own queue), lead (everything), auditor (read-only).
External reviewers (labels imported from elsewhere) have no password and cannot log in.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass

from annotate.errors import AnnotateError
from annotate.store import Store
from annotate.store import users as sql

ROLES = ("reviewer", "lead", "auditor")
MIN_PASSWORD = 8
# scrypt cost: n=2**14, r=8 is the OWASP-recommended minimum (16 MiB, tens of ms a check)
_N, _R, _P = 2**14, 8, 1


class AuthError(AnnotateError):
    """Wrong name or password, an inactive account, or a forbidden action."""


@dataclass(frozen=True)
class User:
    name: str
    role: str
    active: bool = True
    external: bool = False

    @property
    def is_lead(self) -> bool:
        return self.role == "lead"

    @property
    def can_label(self) -> bool:
        return self.role in ("reviewer", "lead")


def hash_password(password: str) -> str:
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=_N, r=_R, p=_P, dklen=32)
    encode = base64.b64encode
    return f"scrypt${_N}${_R}${_P}${encode(salt).decode()}${encode(digest).decode()}"


def check_password(password: str, stored: str | None) -> bool:
    if not stored or not stored.startswith("scrypt$"):
        return False
    _, n, r, p, salt, digest = stored.split("$")
    expected = base64.b64decode(digest)
    actual = hashlib.scrypt(
        password.encode(),
        salt=base64.b64decode(salt),
        n=int(n),
        r=int(r),
        p=int(p),
        dklen=len(expected),
    )
    return hmac.compare_digest(actual, expected)


def has_accounts(store: Store) -> bool:
    """True once any account that can log in exists (external reviewers do not count)."""
    return sql.count_loginable(store) > 0


def add_user(store: Store, name: str, role: str, password: str) -> User:
    name = name.strip()
    if not name or any(c.isspace() for c in name) or len(name) > 64:
        raise AuthError("a user name is 1-64 characters with no spaces")
    if role not in ROLES:
        raise AuthError(f"unknown role {role!r}; use one of: {', '.join(ROLES)}")
    if len(password) < MIN_PASSWORD:
        raise AuthError(f"the password must have at least {MIN_PASSWORD} characters")
    existing = sql.user_row(store, name)
    with store.transaction():
        if existing is None:
            sql.insert_user(store, name, role, hash_password(password))
        elif existing[
            "external"
        ]:  # an external reviewer gets an account; imported labels stay theirs
            sql.promote_external(store, name, role, hash_password(password))
        else:
            raise AuthError(f"a user named {name!r} exists already")
    return User(name, role)


def create_first_lead(store: Store, name: str, password: str) -> User:
    if has_accounts(store):
        raise AuthError("the first lead exists already; log in, or ask a lead for an account")
    return add_user(store, name, "lead", password)


def authenticate(store: Store, name: str, password: str) -> User:
    row = sql.user_row(store, name.strip())
    if row is None or not check_password(password, row["password_hash"]):
        raise AuthError("wrong user name or password")
    if not row["active"]:
        raise AuthError(f"the account {name!r} is deactivated; ask a lead")
    return User(name.strip(), row["role"])


def set_active(store: Store, name: str, active: bool) -> None:
    """Deactivate (or reactivate) an account; its labels stay."""
    if sql.user_row(store, name) is None:
        raise AuthError(f"no user named {name!r}")
    sql.update_active(store, name, active)


def list_users(store: Store) -> list[User]:
    return [User(*row) for row in sql.all_users(store)]


def reviewer_names(store: Store) -> list[str]:
    """Active accounts that can label, for assignment."""
    return sql.labeller_names(store)
