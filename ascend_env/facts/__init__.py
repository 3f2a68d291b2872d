"""Raw capture -> Facts: the capture model, one parser module per area, the Facts model.

To add a fact: name what to read in remote/probe.py, parse it and fill its part of Facts in
its area's module here (PARSERS names the parser), and add a sample under tests/data/<parser>/.
"""
