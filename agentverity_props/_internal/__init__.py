"""Machinery. Nothing here is public API."""
