"""Prompt templates (jinja2 *.j2 files in this package) and their rendering."""
