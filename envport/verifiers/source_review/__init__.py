"""The static review of a port's source, before any of it runs (`review.static`).

`rules.py` holds what is allowed and refused, `python.py` and `rust.py` read one file of
each language, `check.py` walks a port and answers the report's check.
"""
