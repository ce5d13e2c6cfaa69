"""Generic solvers, usable on their own with numpy input: assignment, LP/MILP, MDPs, search.

Each solver lives in its own module; this package re-exports their public names.
"""
