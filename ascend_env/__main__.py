"""`python -m ascend_env` runs the command line."""

from ascend_env.cli.app import run

run()
