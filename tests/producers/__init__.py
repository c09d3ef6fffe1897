"""Producers of real OTLP traces: the anthropic SDK under each tracing library (see README.md)."""
