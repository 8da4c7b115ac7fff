"""`envport bench`: steps per second of the reference, the port and anchors, batch by batch.

command.py: the command line; run.py: the reference timed here, ports and anchors in
workers, taking turns; measure.py: the timed loop inside a worker; anchors.py: published
JAX implementations as a yardstick; report.py: the results as data. Imports the targets'
registry, loader and reference, never the verifier.
"""
