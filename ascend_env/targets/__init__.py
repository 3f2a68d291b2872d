"""Host transport: testinfra hosts, Ansible inventories, ssh options, shipping the probe."""
