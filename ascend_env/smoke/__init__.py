"""Smoke workloads that prove an accelerator computes: scripts run on the target, and the
controller side that runs them (runner.py) and judges their JSON evidence (verdict.py)."""
