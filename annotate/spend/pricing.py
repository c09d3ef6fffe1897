"""What LLM calls actually cost: input, output, cache-read and cache-write tokens from
`llm_calls`, priced by the `judge_prices` setting, Message Batches at half price. A run's own
spend (judge, LLM claim extraction, rubric propose) and totals per sample and rubric version.

Prices are US dollars per million tokens: [input, output] with cache reads at 0.1 and cache
writes (5-minute) at 1.25 times the input price, or [input, output, cache read, cache write].
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from annotate.errors import counted
from annotate.judge import llm
from annotate.store import Store
from annotate.store import judge_runs as run_sql
from annotate.store import spend as sql

CACHE_READ_SHARE = 0.1  # of the input price: Anthropic's prompt-caching read price
CACHE_WRITE_SHARE = 1.25  # of the input price: a 5-minute cache write
BATCH_SHARE = 0.5  # Message Batches: half price on every kind of token
KINDS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")


def token_prices(store: Store) -> dict[str, tuple[float, float, float, float]]:
    """model -> (input, output, cache read, cache write) US dollars per million tokens."""
    found = {}
    for model, price in llm.prices(store).items():
        given = [float(p) for p in price]
        if len(given) == 2:
            given += [given[0] * CACHE_READ_SHARE, given[0] * CACHE_WRITE_SHARE]
        found[model] = (given[0], given[1], given[2], given[3])
    return found


def priced(rows: Iterable[Mapping[str, Any]], prices: Mapping[str, tuple]) -> dict[str, Any]:
    """Tokens summed and their cost; a model with no price is named, its cost left out."""
    total: dict[str, Any] = {"calls": 0, **dict.fromkeys(KINDS, 0), "usd": 0.0}
    unpriced: set[str] = set()
    for row in rows:
        total["calls"] += int(row["calls"])
        for kind in KINDS:
            total[kind] += int(row[kind])
        price = prices.get(row["model"])
        if price is None:
            unpriced.add(row["model"])
            continue
        usd = sum(int(row[k]) * p for k, p in zip(KINDS, price, strict=True)) / 1e6
        total["usd"] += usd * (BATCH_SHARE if row["batch"] else 1.0)
    total["usd"] = round(total["usd"], 6)
    total["unpriced_models"] = sorted(unpriced)
    return total


def judge_run_spend(store: Store, run_id: int | None) -> dict[str, Any]:
    rows = sql.run_tokens(store, run_id) if run_id is not None else []
    return priced(rows, token_prices(store))


def judge_runs_spend(store: Store, version: int | None = None) -> list[dict[str, Any]]:
    """Every judge run (of one rubric version) with what it used and cost, newest first; a run
    with no LLM call (the offline baseline) costs nothing."""
    prices = token_prices(store)
    grouped: dict[int, list[dict[str, Any]]] = {}
    for row in sql.tokens_per_run(store, version):
        grouped.setdefault(int(row["run_id"]), []).append(row)
    found = []
    for run in reversed(run_sql.runs(store)):
        if version is not None and run["rubric_version"] != version:
            continue
        spend = priced(grouped.get(int(run["id"]), []), prices)
        found.append({"run": run["id"], "judge": run["judge"], "sample": run["sample"],
                      "mode": run["mode"], "status": run["status"], "judged": run["judged"],
                      "started_at": run["started_at"], **spend})  # fmt: skip
    return found


def spend_after(
    store: Store, after_id: int, purpose: str, sample: str | None = None
) -> dict[str, Any]:
    """The spend of a run that began after call `after_id` (claim extraction, propose)."""
    return priced(sql.tokens_after(store, after_id, purpose, sample), token_prices(store))


def last_call_id(store: Store) -> int:
    return sql.last_call_id(store)


def spend_report(
    store: Store, sample: str | None = None, since: datetime | None = None
) -> dict[str, Any]:
    """Totals per sample and rubric version (and purpose), and the total of every call once."""
    prices = token_prices(store)
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for row in sql.tokens_by_scope(store, sample, since):
        groups.setdefault((row["sample"], row["rubric_version"], row["purpose"]), []).append(row)
    rows = [
        {"sample": key[0], "rubric_version": key[1], "purpose": key[2], **priced(found, prices)}
        for key, found in sorted(groups.items(), key=lambda item: repr(item[0]))
    ]
    every = (
        [r for found in groups.values() for r in found]
        if sample is not None
        else sql.tokens_total(store, since)
    )
    return {
        "sample": sample,
        "since": since.isoformat() if since else None,
        "rows": rows,
        "total": priced(every, prices),
        "prices": {m: list(p) for m, p in prices.items()},
        "method": "US dollars per million tokens from the judge_prices setting; cache reads "
        f"{CACHE_READ_SHARE} and cache writes {CACHE_WRITE_SHARE} times the input price unless "
        f"set; Message Batches {BATCH_SHARE} times",
    }


def spend_text(spend: Mapping[str, Any]) -> str:
    """One line for people: calls, each kind of token, dollars (or which model has no price)."""
    tokens = ", ".join(
        f"{spend[kind]:,} {kind.removesuffix('_tokens').replace('_', '-')}" for kind in KINDS
    )
    cost = f"${spend['usd']:,.4f}"
    if spend.get("unpriced_models"):
        cost += f" (no price for {', '.join(spend['unpriced_models'])} in judge_prices)"
    return f"{counted(spend['calls'], 'call')}, {tokens} tokens, {cost}"
