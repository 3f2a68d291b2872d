"""The Typer app and its terminal rendering."""
