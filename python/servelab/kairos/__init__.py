"""Kairos (HPDC'23): heterogeneous instance mixes under a cost budget.

Query distribution by min-cost bipartite matching, a throughput upper bound that picks a
configuration without online trials, Kairos+ search, and the baselines Kairos is compared with.
"""
