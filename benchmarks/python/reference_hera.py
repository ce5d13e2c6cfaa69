"""Straightforward Python implementations of Hera's Algorithm 1 (co-location affinity for every
pair) and Algorithm 2 (the cluster scheduler, Hera's selection and DeepRecSys), written from the
paper's pseudo-code with the same choices servelab documents (ways 1..K-1; a low model's partner
is the highest-affinity high model still short of its target, else the highest-affinity low model
still short whose pair keeps EMU >= 1; alone when none is left). The benchmark checks that
servelab gives the same answers before timing both."""

from __future__ import annotations


def affinity(qps_a, qps_b, bw_a, bw_b, system_bw):
    """Algorithm 1 for one pair: qps_x[k] with half the cores and k ways (index 0 unused)."""
    ways = len(qps_a) - 1
    llc = 0.0
    for i in range(1, ways):
        term = (qps_a[i] / qps_a[ways] + qps_b[ways - i] / qps_b[ways]) / 2
        if term > llc:
            llc = term
    demand = bw_a + bw_b
    dram = min(system_bw / demand, 1.0) if demand > 0 else 1.0
    return min(llc, dram)


def affinity_matrix(qps_by_ways, bandwidth, system_bw):
    n = len(qps_by_ways)
    out = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i, n):
            v = affinity(qps_by_ways[i], qps_by_ways[j], bandwidth[i], bandwidth[j], system_bw)
            out[i][j] = out[j][i] = v
    return out


def schedule(isolated, high, aff, pair_qps, target, selection="hera"):
    """Servers as (a, b) pairs, b = -1 alone, in the order they are added."""
    n = len(isolated)
    serviced = [0.0] * n
    servers = []

    def add(a, b):
        qa = isolated[a] if b < 0 else pair_qps[a][b]
        serviced[a] += qa
        if b >= 0:
            serviced[b] += pair_qps[b][a]
        servers.append((a, b))

    def alone(i):
        while serviced[i] < target[i]:
            add(i, -1)

    if selection == "deeprecsys":
        for i in range(n):
            alone(i)
        return servers
    for i in range(n):
        if high[i]:
            continue
        while serviced[i] < target[i]:
            partner = -1
            for want_high in (True, False):  # high models first, then a low one
                best = -1.0
                for j in range(n):
                    ok = j != i and pair_qps[i][j] > 0 and pair_qps[j][i] > 0
                    emu = ok and pair_qps[i][j] / isolated[i] + pair_qps[j][i] / isolated[j]
                    ok = ok and (want_high or emu >= 1.0)
                    if high[j] == want_high and serviced[j] < target[j] and ok and aff[i][j] > best:
                        best, partner = aff[i][j], j
                if partner >= 0:
                    break
            add(i, partner)
    for i in range(n):
        if high[i]:
            alone(i)
    return servers
