// What RRL adds to the registries: its CPU parallelism model as a config model ("rrl_cpu"). Its
// tuners are policies written in Python (servelab.rrl), which join the scheduler registry there.
#pragma once

#include "servelab/cluster/config_model.hpp"

namespace servelab::rrl {
void register_config_models(cluster::ConfigModelRegistry& registry);
}  // namespace servelab::rrl
