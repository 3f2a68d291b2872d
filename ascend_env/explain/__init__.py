"""The error signature knowledge base (ascend_env/data/signatures/) and its matcher."""
