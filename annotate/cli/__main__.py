"""`python -m annotate.cli`: the `annotate` command."""

from annotate.cli.main import main

if __name__ == "__main__":
    raise SystemExit(main())
