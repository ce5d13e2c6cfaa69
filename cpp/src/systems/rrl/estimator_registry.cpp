// The estimator backends by name (estimator_backend.hpp): "eigen" built in, "libtorch" joining from
// servelab._torch (core/plugin_table.hpp).
#include <utility>

#include "eigen_estimator.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/core/plugin_table.hpp"
#include "servelab/systems/rrl/estimator_backend.hpp"

namespace servelab::rrl {
namespace {

PluginTable<EstimatorBackendFactory>& table() {
  static PluginTable<EstimatorBackendFactory> t("estimator backend", {{"eigen", make_eigen_estimator}});
  return t;
}

}  // namespace

void register_estimator_backend(const std::string& name, EstimatorBackendFactory factory, const std::string& origin) {
  table().join(name, std::move(factory), origin);
}

bool has_estimator_backend(const std::string& name) { return table().contains(name); }

std::vector<std::string> estimator_backends() { return table().names(); }

std::string estimator_backend_origin(const std::string& name) { return table().origin(name); }

std::unique_ptr<EstimatorBackend> make_estimator_backend(const std::string& name, const EstimatorShape& shape,
                                                         std::span<const float> w0, const EstimatorOptions& options) {
  const auto factory = table().find(name);
  if (!factory) {
    throw ValueError(str("estimator backend='", name, "' is not registered (registered: ", table().listed(),
                         "); 'libtorch' registers when servelab's torch backend loads: "
                         "servelab.backends.require('torch'), in a build with LibTorch"));
  }
  if (w0.size() != shape.parameters()) {
    throw ValueError(str("estimator backend '", name, "' got ", w0.size(), " initial weights for ", shape.parameters(),
                         " parameters"));
  }
  return (*factory)(shape, w0, options);
}

}  // namespace servelab::rrl
