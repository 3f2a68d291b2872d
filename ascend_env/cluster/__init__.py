"""Cluster bring-up: rank tables across hosts."""
