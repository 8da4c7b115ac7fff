"""What a verify report holds, and the comparisons that fill it.

divergence.py: the report's models (VerifyReport, LevelResult, Divergence, FieldDiff);
compare.py: steps compared field by field with the spec's tolerances; states.py: states
stacked and compared; grids.py: a declared grid's difference drawn cell by cell; series.py:
the values around an L3 divergence; branch_report.py: the coverage figures a report shows;
replay.py: a replay line as data; junit.py: JUnit XML. Imports only options.py of the
verifier (a replay names the options it was run with).
"""
