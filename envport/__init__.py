"""envport: port reference RL environments to fast backends and prove the port matches."""

__version__ = "0.1.0"
