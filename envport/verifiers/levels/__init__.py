"""The verification levels, one package each, and reverse injection.

l1/: one transition from a drawn state (probes, landings on the reference's constants, a
stochastic env's sampler and step); l2/: interactions, batches and resets from drawn
states; l3/: whole episodes from resets, in lanes or on Ray, with proposed cases; l4/:
policies trained on both sides, returns tested for equivalence; reverse.py: a port that
cannot load a state, verified from its own start states.

No level's package imports another's (what two levels share lives below: draws/, stats/,
reporting/); reverse.py plays L3's episodes. A level may import vector/, stats/, draws/,
coverage/, reporting/ and options.py, never the checks list, the context or verify().
"""
