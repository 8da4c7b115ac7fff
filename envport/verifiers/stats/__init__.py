"""The statistics of the sampled checks: two-sample tests, sample sizes, equivalence.

two_sample.py: the per-component tests (chi-square, KS) and the support test;
sample_compare.py: a reference and a port sample compared column by column, with joint
columns (joint.py); reset_sample.py: reset states drawn on both sides, and its design;
noise_stats.py: the sampler check's designs; tost.py: L4's paired equivalence test.
Imports reporting/ only (the differences it reports), never a level.
"""
