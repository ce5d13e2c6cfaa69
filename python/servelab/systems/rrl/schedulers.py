"""RRL's registered schedulers: its tuners are policies written in Python, registered here (the
scheduler registry calls :func:`register` the first time it is listed or used)::

    servelab.simulate(scenario, scheduler="rrl_tuner(cores=2, episode_requests=50)")
"""

from __future__ import annotations

#: name -> what it is (the registry's doc has the details)
SCHEDULERS = {
    "rrl_tuner": "RRL tuning the workers' parallelism knobs with set_config while serving FCFS",
    "rrl_batch_tuner": "RRL tuning the GPU batching knobs (batch size, timeout, threads)",
}


def register() -> list[str]:
    """Registers every RRL policy (once per process); returns their names."""
    from .batch_policy import register_batch_tuner  # on use: keeps servelab.rrl light
    from .sim_policy import register_tuner

    return [register_tuner(), register_batch_tuner()]
