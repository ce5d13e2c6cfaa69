"""RAMSIS (EuroSys'24): per-worker MDP policies for model selection that exploit arrival lulls."""
