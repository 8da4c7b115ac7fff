"""`envport batch BATCH.toml`: many translate runs, concurrent, under cost caps, resumable.

Each run of the batch is an `envport translate` (or `envport resume`) subprocess in its own
stable directory, so a batch killed at any point continues by running the same command
again, and each run's response cache sees to it that no model request is paid for twice.
"""
