"""The verifier: `envport verify`, a port held to its reference at levels L1 to L4.

At this top: verify() (verify.py) runs the list of checks (checks.py) over one
VerifyContext (context.py: the spec, the reference, the port's worker, the report);
options.py holds what verify is asked to do, read by every layer below. selfcheck.py runs
verify on planted mutants; host.py is the program a port worker runs. explore.py and
plain.py are the two checks that need the whole context (l3.explore, l3.plain).

Below, each subpackage one layer (pyproject.toml, [tool.importlinter]; a layer imports
only from the layers under it): levels/ and vector/ (the checks), stats/ and draws/ (what
they test with and what they draw), coverage/ (what a run exercised of the reference),
reporting/ (what a report holds, and comparing two sides), options.py. The map of which
check lives where: docs/design.md, "The verifier's map".
"""
