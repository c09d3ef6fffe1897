"""The shapes and shared words of the sample data: topics, docs, facts, slot specs, name pools.

Pure data for annotate.demo.generator; no randomness and no I/O. The topics themselves live in
demo_topics_business and demo_topics_technical.
"""

from __future__ import annotations

from dataclasses import dataclass

# A slot spec is a tuple: ("money", lo, hi) with cents, ("money0", lo, hi) whole, ("count", lo, hi),
# ("step", values[, kind]), ("pct", lo, hi), ("dur", lo, hi) a duration, ("date"|"isodate", lo, hi)
# days from the trace's day, ("person",), ("pick", pool), ("drug",) a row of DRUGS, and two kinds
# a contradiction never alters: ("id", lo, hi) and ("among", pool).
SlotSpec = tuple


@dataclass(frozen=True)
class Doc:
    source: str
    text: str


@dataclass(frozen=True)
class Fact:
    doc: int
    text: str
    wrong: tuple[tuple[str, str], ...] = ()  # (error_type, a rewrite the doc contradicts)


@dataclass(frozen=True)
class Extra:
    error_type: str
    text: str
    doc: int | None = None  # a partial claim: the doc that supports its first half


@dataclass(frozen=True)
class Sentence:
    """One sentence of a generated response and its truth."""

    text: str
    label: str
    error_type: str | None = None
    doc: int | None = None  # the topic document that supports or contradicts it
    order: float = 0.0  # where it goes among the response's factual sentences


@dataclass(frozen=True)
class Topic:
    name: str
    feature: str
    risk: str
    weight: float
    slots: dict[str, SlotSpec]
    requests: tuple[tuple[str, int], ...]  # (request, index of the fact that answers it)
    docs: tuple[Doc, ...]
    facts: tuple[Fact, ...]
    partials: tuple[Extra, ...]
    extras: tuple[Extra, ...]


FIRST_NAMES = (
    "Maria", "James", "Aisha", "Chen", "Olivia", "Mateo", "Priya", "Liam", "Fatima", "Noah",
    "Sofia", "Kenji", "Amara", "Lucas", "Ingrid", "Omar", "Hannah", "Diego", "Yuki", "Grace",
    "Tomasz", "Leila", "Ethan", "Zanele", "Zoë", "José", "Björn", "Siobhán", "Anika", "Rafael",
)  # fmt: skip
LAST_NAMES = (
    "Garcia", "Okafor", "Nguyen", "Schmidt", "Patel", "Kowalski", "Haddad", "Johansson",
    "Rossi", "Kim", "Silva", "Dubois", "Murphy", "Tanaka", "Mensah", "Novak", "Fischer",
    "Alvarez", "Cohen", "Brennan", "Müller", "Núñez", "Larsen", "Adeyemi", "Moreau", "Łukasik",
)  # fmt: skip

# name, tablet dose (mg), hours between doses, max mg per 24 h, what not to combine it with
DRUGS = (
    ("ibuprofen", 200, 6, 1200, "aspirin"),
    ("naproxen sodium", 220, 12, 660, "ibuprofen"),
    ("acetaminophen", 500, 6, 3000, "other acetaminophen products"),
    ("cetirizine", 10, 24, 10, "alcohol"),
    ("loratadine", 10, 24, 10, "other antihistamines"),
    ("famotidine", 20, 12, 40, "other acid reducers"),
    ("diphenhydramine", 25, 6, 300, "sleeping pills"),
)

POOLS = {
    "plan": ("Starter", "Team", "Business", "Pro", "Enterprise"),
    "small_plan": ("Starter", "Team", "Pro"),
    "big_plan": ("Business", "Enterprise", "Scale"),
    "workspace": ("acme-finance", "northpeak", "blue-harbor", "studio-kite", "fernwood-labs"),
    "city": ("Chicago", "Lisbon", "Berlin", "Toronto", "Singapore", "Austin", "Manchester",
             "Nairobi", "Warsaw", "Denver"),
    "site": ("the Leeds warehouse", "Building C in Austin", "the Rotterdam depot",
             "the Denver lab", "the Pune office", "the Lyon plant"),
    "procedure": ("colonoscopy", "upper endoscopy", "knee arthroscopy", "cataract surgery",
                  "wisdom tooth extraction"),
    "insurance": ("Bronze 2500", "Silver PPO", "Gold HMO", "Choice Plus 1500", "Essential EPO"),
    "relative": ("husband", "wife", "daughter", "son", "mother", "partner"),
    "service": ("checkout-api", "ledger-worker", "notify-gateway", "search-indexer", "auth-proxy"),
    "vault": ("HashiCorp Vault", "AWS Secrets Manager", "Doppler", "GCP Secret Manager"),
    "env_var": ("PAYMENTS_API_KEY", "BILLING_SVC_KEY", "ACME_TOKEN", "NOTIFY_API_KEY"),
    "pii_field": ("email", "phone_number", "ip_address", "date_of_birth", "iban"),
    "redact_fn": ("mask_pii", "redact_value", "scrub", "obfuscate"),
    "log_lib": ("structlog", "loguru", "logging"),
    "table": ("orders", "invoices", "users", "sessions", "events", "line_items", "audit_log"),
    "window": ("Tuesday 02:00-04:00 UTC", "Thursday 22:00-23:30 UTC",
               "Sunday 01:00-05:00 UTC", "Wednesday 03:00-04:00 UTC"),
    "drug": tuple(row[0] for row in DRUGS),
}  # fmt: skip

GREETINGS = {
    "billing_qa": ("Thanks for reaching out about your bill.", "Sorry for the confusion with "
                   "your charges.", "Happy to help with that.", "Good question!"),
    "hr_policy": ("Thanks for asking.", "Happy to help with that.", "Great question."),
    "medical_info": ("Thanks for your question.", "I'm sorry you're dealing with this.",
                     "Happy to help."),
    "code_assistant": ("Good question.", "Sure, here's how that works.", "Let's sort this out.",
                       "Happy to help with this.", "Short version below.", "Good catch.",
                       "Here's the **short** version."),
}  # fmt: skip

# Code answers sometimes carry literal markup, which the app must show as text.
CLOSINGS = {
    "billing_qa": ("Let me know if there's anything else I can help with.",
                   "Feel free to reply here if anything still looks wrong.",
                   "You may want to keep an eye on your statement this week.",
                   "Did you pay by card or by bank transfer?"),
    "hr_policy": ("Reach out to HR if your situation is unusual.", "Hope that helps!",
                  "I'd suggest keeping copies of everything you submit.",
                  "Let me know if you have other questions."),
    "medical_info": ("Please check with your doctor or pharmacist before changing how you take "
                     "any medicine.", "If your symptoms get worse, seek medical care.",
                     "I hope you feel better soon.", "Call your clinic if anything is unclear."),
    "code_assistant": ("Hope this helps!", "Test it with a small batch first.",
                       "Let me know if you hit an error.", "Try it in staging before production.",
                       "Happy coding!", "Ping the platform channel if it still fails.",
                       "Want me to sketch the code for that?", "Add a test for it while you're "
                       "there.", "**Tip:** try it in staging before production.",
                       'Show any of this in the UI as text inside `<div class="log">`, never '
                       "as raw HTML.", "Never echo raw input like `<script>alert(1)</script>` "
                       "back into a page."),
}  # fmt: skip
