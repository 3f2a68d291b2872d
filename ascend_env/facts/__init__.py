"""Raw capture -> Facts: the capture model, one parser module per area, the Facts model.

To add a fact: name what to read in remote/probe.py, parse it in its area's module here (listed
in that module's PARSERS; a field in model.py if checks need a new one), add tests/data/<parser>/.
"""
