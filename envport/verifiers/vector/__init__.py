"""l2.vector: the port's VectorEnv driven against Gymnasium's SyncVectorEnv.

check.py: the check over its batch sizes; run.py: one batch size, call by call;
seeding.py: the promises of `reset(seed=...)`; reference.py: the reference envs a vector
run steps. Imports stats/ (reset samples), draws/ (the plan's actions) and reporting/.
"""
