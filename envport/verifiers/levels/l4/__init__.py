"""L4, transfer: policies trained on the port and on the reference, returns compared.

equivalence.py: the level (paired TOST over K seeds, stats/tost.py); reference.py: the
reference's batched envs for the trainers; port.py: the trainers' side in the port's worker
(imported by host.py only). The trainers themselves are draws/trainers.py.
"""
