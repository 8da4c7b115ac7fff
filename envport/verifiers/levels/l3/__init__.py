"""L3, rollouts: whole episodes from resets, free-running and resynced, every step compared.

rollout.py: playing the reference, the port's requests and the judging; played.py: the
reference's episodes as columns; chunks.py and lanes.py: the episodes in chunks over lanes
of workers; on_ray.py: the same chunks as Ray tasks; replay.py: each divergence's replay
line made to show it again; cases.py: proposed cases, played like free-running episodes.
Imports coverage/ (L3 measures the bounds and branches it reaches), draws/ and reporting/.
"""
