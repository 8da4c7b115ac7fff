"""Repair: extracting whole-file edits from model answers and applying them to a port."""
