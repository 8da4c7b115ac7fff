"""What the levels draw and play: states, actions, policies, start states, probes.

strategies.py: hypothesis strategies of states and actions from the spec, with edges at the
reference's constants (constants.py) and out-of-range actions (action_range.py); hypo.py:
the hypothesis profile; rejects.py: drawn states the reference refuses; landing.py: start
states solved on the reference; probes.py: the spec's L1 probe files; policies.py: the
episode plan and its policies; survival.py: episodes that reach the time limit (reverse
injection); trainers.py: L4's trainers. Imports nothing of the verifier outside draws/
"""
