#include "servelab/exec/recsys/backends.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <utility>

#include "servelab/core/errors.hpp"

namespace servelab::exec::recsys {
namespace {

std::shared_ptr<RecsysModel> make_reference(Spec spec, Weights weights) {
  return std::make_shared<ReferenceRecsys>(std::move(spec), std::move(weights));
}

struct Table {
  std::mutex mutex;
  std::map<std::string, ModelMaker> makers{{"reference", &make_reference}};
  std::function<void(const std::string&)> loader;
};

Table& table() {
  static Table t;
  return t;
}

ModelMaker find(const std::string& name) {
  auto& t = table();
  std::lock_guard lock(t.mutex);
  const auto it = t.makers.find(name);
  return it == t.makers.end() ? nullptr : it->second;
}

}  // namespace

std::vector<std::string> backend_names() { return {"reference", "onednn", "cuda"}; }

void add_backend(const std::string& name, ModelMaker maker) {
  auto& t = table();
  std::lock_guard lock(t.mutex);
  t.makers[name] = maker;
}

void set_backend_loader(std::function<void(const std::string&)> loader) {
  auto& t = table();
  std::lock_guard lock(t.mutex);
  t.loader = std::move(loader);
}

std::shared_ptr<RecsysModel> make_model(const std::string& backend, Spec spec, Weights weights) {
  const auto names = backend_names();
  if (std::find(names.begin(), names.end(), backend) == names.end()) {
    throw KeyError(
        str("recsys model ", spec.name, ": backend='", backend, "' is unknown; choose reference, onednn or cuda"));
  }
  ModelMaker maker = find(backend);
  if (maker == nullptr) {
    std::function<void(const std::string&)> loader;
    {
      std::lock_guard lock(table().mutex);
      loader = table().loader;
    }
    if (loader) loader(backend);  // throws when the module cannot be loaded, saying why
    maker = find(backend);
  }
  if (maker == nullptr) {
    throw RuntimeError(str("recsys model ", spec.name, ": backend '", backend,
                           "' is not loaded (load its module, e.g. "
                           "servelab.backends.require('",
                           backend, "'))"));
  }
  return maker(std::move(spec), std::move(weights));
}

}  // namespace servelab::exec::recsys
