// The estimator backends by name (estimator_backend.hpp). Modules join while Python imports them and
// estimators are built on any thread, so the table is behind a mutex; factories run outside it.
#include <map>
#include <mutex>

#include "eigen_estimator.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/systems/rrl/estimator_backend.hpp"

namespace servelab::rrl {
namespace {

constexpr const char* kBuiltIn = "servelab._core";

struct Registered {
  EstimatorBackendFactory factory;
  std::string origin;
};

std::mutex& table_mutex() {
  static std::mutex m;
  return m;
}

std::map<std::string, Registered>& table() {
  static std::map<std::string, Registered> t{{"eigen", {make_eigen_estimator, kBuiltIn}}};
  return t;
}

std::string names_locked() {
  std::string out;
  for (const auto& [name, _] : table()) out += (out.empty() ? "" : ", ") + name;
  return out;
}

}  // namespace

void register_estimator_backend(const std::string& name, EstimatorBackendFactory factory, const std::string& origin) {
  if (name.empty() || !factory) throw ValueError("an estimator backend needs a name and a factory");
  std::lock_guard lock(table_mutex());
  const auto it = table().find(name);
  if (it != table().end() && it->second.origin != origin) {
    throw ValueError(str("estimator backend '", name, "' is already registered by ", it->second.origin));
  }
  table()[name] = {std::move(factory), origin};
}

bool has_estimator_backend(const std::string& name) {
  std::lock_guard lock(table_mutex());
  return table().count(name) != 0;
}

std::vector<std::string> estimator_backends() {
  std::lock_guard lock(table_mutex());
  std::vector<std::string> out;
  for (const auto& [name, _] : table()) out.push_back(name);
  return out;
}

std::string estimator_backend_origin(const std::string& name) {
  std::lock_guard lock(table_mutex());
  const auto it = table().find(name);
  return it == table().end() ? std::string() : it->second.origin;
}

std::unique_ptr<EstimatorBackend> make_estimator_backend(const std::string& name, const EstimatorShape& shape,
                                                         std::span<const float> w0, const EstimatorOptions& options) {
  EstimatorBackendFactory factory;
  {
    std::lock_guard lock(table_mutex());
    const auto it = table().find(name);
    if (it == table().end()) {
      throw ValueError(str("estimator backend='", name, "' is not registered (registered: ", names_locked(),
                           "); 'libtorch' registers when servelab's torch backend loads: "
                           "servelab.backends.require('torch'), in a build with LibTorch"));
    }
    factory = it->second.factory;
  }
  if (w0.size() != shape.parameters()) {
    throw ValueError(str("estimator backend '", name, "' got ", w0.size(), " initial weights for ", shape.parameters(),
                         " parameters"));
  }
  return factory(shape, w0, options);
}

}  // namespace servelab::rrl
