"""The run store: run directory, run state, transcript journal, git history, resume."""
