"""L1, one step: the port's functions and transitions from states drawn by hypothesis.

properties.py: each probe and the whole transition; landings.py: start states solved to
land next to the reference's constants; noise.py: the port's sampler against the
reference's (l1.noise); sampled_step.py: a stochastic env's own `step` (l1.sampled_step).
Imports draws/, stats/ and reporting/; no other level.
"""
