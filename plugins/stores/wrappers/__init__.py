"""Stores that wrap another store: a cache and request metrics."""
