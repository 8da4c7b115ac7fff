"""The import path probe files use, `from envport.verifiers.probes import probe`: users' own
probes and the probe files of runs frozen before the verifier was split into packages keep
working. The decorator and the loader live in envport.verifiers.draws.probes."""

from envport.verifiers.draws.probes import probe

__all__ = ["probe"]
