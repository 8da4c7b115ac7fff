"""The reference's source for the prompts: read, and sliced to what a port needs.

reading.py: the source files and rules a prompt shows; reach.py: what of the source the
env's reset and step reach, on its syntax tree; slicing.py: that reach as text;
imports.py: how one module names another; names.py: what a name refers to (module
aliases, `self.x = Cls(...)`, a class's ancestors). Imports nothing else of the pipeline.
"""
