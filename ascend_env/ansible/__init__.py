"""Running ansible-playbook: the typed playbook variables, its events, extra vars."""
