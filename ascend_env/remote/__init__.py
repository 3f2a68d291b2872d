"""Programs shipped to a target and run there.

Standard library only, Python 3.8+, never importing ascend_env: they run on hosts and in
images where ascend-env is not installed."""
