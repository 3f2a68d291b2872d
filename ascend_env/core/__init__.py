"""Errors, resource lookup and vendor version ordering: what every capability uses."""
