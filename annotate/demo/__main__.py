"""`python -m annotate.demo`: write the bundled sample traces and their truth file."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from annotate.demo.generator import DEFAULT_N, DEFAULT_SEED, write_sample


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m annotate.demo",
        description="Write the deterministic sample traces and their truth file.",
    )
    parser.add_argument("--out", type=Path, default=Path("data"), help="directory (default: data)")
    parser.add_argument("--n", type=int, default=DEFAULT_N, help=f"traces (default: {DEFAULT_N})")
    parser.add_argument(
        "--seed", type=int, default=DEFAULT_SEED, help=f"seed (default: {DEFAULT_SEED})"
    )
    args = parser.parse_args(argv)
    if args.n < 1:
        parser.error("--n must be at least 1")
    for path in write_sample(args.out, args.n, args.seed):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
