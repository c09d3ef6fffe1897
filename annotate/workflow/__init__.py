"""The lead's path through the app: where a sample stands and what comes next."""
