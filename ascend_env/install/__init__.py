"""Install: a verified repository (fetch, wheelhouse) and ansible-playbook runs."""
