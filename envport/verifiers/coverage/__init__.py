"""What a run exercised of the reference, and whether the reference can be trusted to.

branches.py: branch coverage of the reference's own source per level (coverage.py);
settling.py: branches a setting decides once; bounds.py: L3's states against the spec's
bounds; endings.py: the ways of ending an episode the rollouts reached; determinism.py:
the reference answers the same from the same injected state; cells.py: l3.explore's
archive keys. Imports reporting/.
"""
