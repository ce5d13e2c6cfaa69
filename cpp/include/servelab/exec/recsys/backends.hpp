// The recommendation-model backends by name. "reference" is always here; "onednn" and "cuda" live
// in their own extension modules (which _core must not link) and add their constructor when they
// load, through the capsule of cpp/bindings/recsys_plugin.hpp.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "servelab/exec/recsys/model.hpp"

namespace servelab::exec::recsys {

using ModelMaker = std::shared_ptr<RecsysModel> (*)(Spec spec, Weights weights);

// Every backend name a model can ask for, loaded or not.
std::vector<std::string> backend_names();
// Adds a backend; `origin` names the module it came from (ValueError if another module holds it).
void add_backend(const std::string& name, ModelMaker maker, const std::string& origin);
std::vector<std::string> loaded_backends();           // the backends loaded so far, sorted
std::string backend_origin(const std::string& name);  // "" for a backend not loaded
// Called when a backend is asked for before its module has added it: the Python bindings load the
// module here. It returns "" when it did, else why the backend is not usable.
using BackendLoader = std::function<std::string(const std::string& name)>;
void set_backend_loader(BackendLoader loader);
// KeyError naming `backend` when the name is unknown; RuntimeError when it cannot be loaded.
std::shared_ptr<RecsysModel> make_model(const std::string& backend, Spec spec, Weights weights);

}  // namespace servelab::exec::recsys
