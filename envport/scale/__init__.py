"""Past one machine: Ray, the cluster engine RL users already run (RLlib's), as an optional
executor for `envport verify` (L3 chunks as tasks) and `envport batch` (runs as tasks).
Local execution stays the default and needs none of this package."""
