"""The capture model, the parsers by area and the Facts model built from a capture."""
