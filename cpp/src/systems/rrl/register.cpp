#include "servelab/systems/rrl/register.hpp"

#include "servelab/systems/rrl/config_model.hpp"

namespace servelab::rrl {
// Each file that defines a registered model adds its register_<name>(registry) call here.
void register_config_models(cluster::ConfigModelRegistry& registry) { register_cpu_config_model(registry); }
}  // namespace servelab::rrl
