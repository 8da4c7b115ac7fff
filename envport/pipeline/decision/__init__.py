"""The run's decision rules, pure: a phase's outcome in, a decision out.

decide.py: `decide(state, outcome)`; decide_optimize.py: the optimisation rounds' rules;
values.py: the outcomes, decisions and acts they work on; verdict.py: what both rule sets
end with. Imports only optimize.py and plan.py of the pipeline (the values they carry);
the phases and the driver above carry decisions out.
"""
