"""The published systems servelab re-implements, one package each (``servelab.systems.<paper>``,
also reachable by its short name ``servelab.<paper>``).

Every system follows one template (docs/architecture.md): offline algorithms, its registered
schedulers, an experiment harness that builds Scenarios and runs them through
``servelab.simulate`` / ``servelab.serve``, the paper's constants and comparisons, readers of the
paper's artifact data, a CLI subcommand and plots, each in its own module.
"""

#: short name -> what the system is (the CLI and docs list them from here)
SYSTEMS = {
    "kairos": "Kairos (HPDC'23): heterogeneous instance mixes under a cost budget",
    "ramsis": "RAMSIS (EuroSys'24): per-worker MDP model-selection policies",
    "rrl": "RRL (SC'19): region-based Q-learning of serving parallelism",
    "hera": "Hera: co-locating recommendation models on CPU servers by worker scalability",
    "infaas": "INFaaS (ATC'21): model-less serving, per-query variant selection, model autoscaling",
}
