"""The names a sampling command offers (its argparse choices), apart from the modules that
act on them: `annotate sample` builds its parser, and draws from files or the store, without
importing pandas (the active draw's) or sqlglot (the warehouse queries'), 0.5-0.6 s a
command."""

ACTIVE = "active"  # the allocation drawn by annotate.sampling.active
DIALECTS = ("duckdb", "spark", "bigquery", "snowflake", "trino", "postgres")  # --emit-sql's
