// Named implementations that optional modules add at run time: RRL's estimator backends, INFaaS's
// scaling solvers, the recommendation-model backends. The core holds the built-in ones; a backend
// module (servelab._torch, _lp, _onednn, _cuda) joins with its own when it loads, through its
// capsule (cpp/bindings/plugin_capsule.hpp), and a loader set by the bindings imports that module
// the first time one of its names is asked for.
//
// (Registry<T> in registry.hpp builds products from typed Params; the implementations here are
// plain functions with signatures of their own, so they get this smaller table.)
//
// Thread-safe: modules join while Python imports them and lookups come from any thread; the loader
// and the functions run outside the lock (a module joins from inside the loader).
#pragma once

#include <functional>
#include <initializer_list>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "servelab/core/errors.hpp"

namespace servelab {

template <typename Fn>
class PluginTable {
 public:
  // Loads the module that adds `name`; returns "" when it did (or knows no module for the name),
  // else why the module is not usable.
  using Loader = std::function<std::string(const std::string& name)>;
  static constexpr const char* kBuiltIn = "servelab._core";

  // `kind` names an entry in messages: "estimator backend".
  PluginTable(std::string kind, std::initializer_list<std::pair<std::string, Fn>> builtins) : kind_(std::move(kind)) {
    for (const auto& [name, fn] : builtins) entries_[name] = {fn, kBuiltIn};
  }

  // Adds `fn` as `name`, from module `origin`. ValueError if the name is held by another origin
  // (a built-in name is never replaced; a module joining again replaces its own).
  void join(const std::string& name, Fn fn, const std::string& origin) {
    if (name.empty() || !fn) throw ValueError(str(kind_, " name='", name, "': a name and a function are needed"));
    std::lock_guard lock(mutex_);
    const auto it = entries_.find(name);
    if (it != entries_.end() && it->second.origin != origin) {
      throw ValueError(str(kind_, " '", name, "' is already registered by ", it->second.origin));
    }
    entries_[name] = {std::move(fn), origin};
  }

  void set_loader(Loader loader) {
    std::lock_guard lock(mutex_);
    loader_ = std::move(loader);
  }

  bool contains(const std::string& name) const {
    std::lock_guard lock(mutex_);
    return entries_.count(name) != 0;
  }
  // Registered names, sorted.
  std::vector<std::string> names() const {
    std::lock_guard lock(mutex_);
    std::vector<std::string> out;
    for (const auto& [name, _] : entries_) out.push_back(name);
    return out;
  }
  // The module `name` came from; "" for an unknown name.
  std::string origin(const std::string& name) const {
    std::lock_guard lock(mutex_);
    const auto it = entries_.find(name);
    return it == entries_.end() ? std::string() : it->second.origin;
  }
  // "a, b, c": the registered names, for messages.
  std::string listed() const {
    std::string out;
    for (const auto& n : names()) out += (out.empty() ? "" : ", ") + n;
    return out;
  }

  // The function registered as `name`, asking the loader first for an unknown name; nullopt when
  // it is still unknown, with the loader's reason in `why` (if given; "" when it had none).
  std::optional<Fn> find(const std::string& name, std::string* why = nullptr) const {
    Loader loader;
    {
      std::lock_guard lock(mutex_);
      if (const auto it = entries_.find(name); it != entries_.end()) return it->second.fn;
      loader = loader_;
    }
    const std::string reason = loader ? loader(name) : std::string();
    if (why) *why = reason;
    std::lock_guard lock(mutex_);
    if (const auto it = entries_.find(name); it != entries_.end()) return it->second.fn;
    return std::nullopt;
  }

 private:
  struct Entry {
    Fn fn;
    std::string origin;
  };
  std::string kind_;
  mutable std::mutex mutex_;
  std::map<std::string, Entry> entries_;
  Loader loader_;
};

}  // namespace servelab
