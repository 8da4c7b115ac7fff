"""`envport bench`: steps per second of the reference, the port and anchors, batch by batch.

run.py: the reference timed here, ports and anchors in workers, taking turns, each size's
port step first checked by the check it is given; measure.py: the timed loop inside a
worker; anchors.py: published JAX implementations as a yardstick; report.py: the results as
data. Imports the targets' registry, loader and reference, never the verifier: the command
line (envport.verifiers.bench_command) sits above it and gives it the verifier's check.
"""
