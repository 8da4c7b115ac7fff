"""What the levels draw and play: states, actions, policies, start states, probes.

strategies.py: hypothesis strategies of states and actions from the spec, with edges at the
reference's constants (constants.py) and out-of-range actions (action_range.py); hypo.py:
the hypothesis profile; rejects.py: drawn states the reference refuses; landing.py: start
states solved on the reference; probes.py: the spec's L1 probe files; policies.py: the
episode plan and its policies; survival.py: episodes that reach the time limit (reverse
injection); trainers.py: L4's trainers; reached_cache.py and kept.py: the reference's slow
answers kept on disk for the next verify. Imports nothing of the verifier outside draws/
but the coverage measure (what drawing took is measured, and kept with what was drawn).
"""

from pathlib import Path

# This package's folder: its files decide what is drawn (their code keys what is kept).
DRAWS_FOLDER = Path(__file__).parent
