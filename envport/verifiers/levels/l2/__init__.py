"""L2, interaction: sequences of reset, load, step and read; batches; the port's resets.

run.py: the three below in order; interaction.py: the hypothesis state machine (l2);
batch.py and sizes.py: a batch equals its envs stepped alone, and large batches (past and at
each power of two, built by tiled.py) equal the reference's steps (l2.batch, l2.sizes);
reset.py: reset states as two samples (l2.reset); state_api.py: loading and reading keep no
shared arrays (l2.state_api). The vector check (l2.vector) has a package of its own,
verifiers/vector/. Imports draws/, stats/ and reporting/; no other level.
"""
