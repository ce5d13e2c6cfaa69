// The recommendation-model backends by name (backends.hpp): "reference" built in, "onednn" and
// "cuda" joining from their modules (core/plugin_table.hpp).
#include "servelab/exec/recsys/backends.hpp"

#include <algorithm>
#include <utility>

#include "servelab/core/errors.hpp"
#include "servelab/core/plugin_table.hpp"

namespace servelab::exec::recsys {
namespace {

std::shared_ptr<RecsysModel> make_reference(Spec spec, Weights weights) {
  return std::make_shared<ReferenceRecsys>(std::move(spec), std::move(weights));
}

PluginTable<ModelMaker>& table() {
  static PluginTable<ModelMaker> t("recsys backend", {{"reference", &make_reference}});
  return t;
}

}  // namespace

std::vector<std::string> backend_names() { return {"reference", "onednn", "cuda"}; }

void add_backend(const std::string& name, ModelMaker maker, const std::string& origin) {
  table().join(name, maker, origin);
}

std::vector<std::string> loaded_backends() { return table().names(); }

std::string backend_origin(const std::string& name) { return table().origin(name); }

void set_backend_loader(BackendLoader loader) { table().set_loader(std::move(loader)); }

std::shared_ptr<RecsysModel> make_model(const std::string& backend, Spec spec, Weights weights) {
  const auto names = backend_names();
  if (std::find(names.begin(), names.end(), backend) == names.end()) {
    throw KeyError(
        str("recsys model ", spec.name, ": backend='", backend, "' is unknown; choose reference, onednn or cuda"));
  }
  std::string why;
  const auto maker = table().find(backend, &why);
  if (!why.empty()) throw RuntimeError(why);
  if (!maker) {
    throw RuntimeError(str("recsys model ", spec.name, ": backend '", backend,
                           "' is not loaded (load its module, e.g. "
                           "servelab.backends.require('",
                           backend, "'))"));
  }
  return (*maker)(std::move(spec), std::move(weights));
}

}  // namespace servelab::exec::recsys
