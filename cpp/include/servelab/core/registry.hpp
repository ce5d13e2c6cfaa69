// Registries: everything interchangeable (arrival processes, size distributions, schedulers,
// executors, solvers, searchers) is registered by name with documented, typed parameters and
// built from a name plus arguments, or from a spec string such as "poisson(rate=100)".
//
// Entries are added explicitly by each area's register_*() function (called once when the
// registry is first used), never by static initialisers that a linker may silently drop.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "servelab/core/errors.hpp"
#include "servelab/core/params.hpp"

namespace servelab {

// Splits "name(a=1, b='x', c=[1, 2])" into its name and arguments. A bare "name" has none.
// Throws ValueError pointing at the offending character.
std::pair<std::string, ParamArgs> parse_spec(std::string_view spec);

// A catalogue of named factories in two layers:
// - built-in entries, added by the areas' register_*() functions while the registry is being built,
//   then frozen: every registry is built once, on first use, and its built-in part never changes;
// - extensions, added and retracted at run time by user code (a policy written in Python joins the
//   scheduler registry this way). They cannot shadow a built-in name. Lookups are thread-safe.
template <typename Product>
class Registry {
 public:
  using Factory = std::function<std::shared_ptr<Product>(const Params&)>;

  struct Entry {
    std::string name;
    std::string doc;
    std::vector<ParamSpec> params;
    Factory factory;
    bool builtin = true;  // false: an extension (e.g. registered from Python)
  };
  using EntryPtr = std::shared_ptr<const Entry>;

  // `kind` names what the registry holds in messages: "arrival process", "scheduler".
  explicit Registry(std::string kind) : kind_(std::move(kind)) {}
  Registry(Registry&& other) noexcept
      : kind_(std::move(other.kind_)), frozen_(other.frozen_), builtins_(std::move(other.builtins_)) {}

  // Adds a built-in entry; only while the registry is being built (before freeze()).
  void add(Entry entry) {
    if (frozen_)
      throw RuntimeError(str("the built-in ", kind_, "s are fixed once built; use extend() for '", entry.name, "'"));
    check_new(entry.name);
    entry.builtin = true;
    std::string name = entry.name;  // copied first: the entry is moved below
    builtins_.emplace(std::move(name), std::make_shared<const Entry>(std::move(entry)));
  }
  // Ends the building phase: from now on only extensions can be added.
  Registry&& freeze() && {
    frozen_ = true;
    return std::move(*this);
  }

  // Adds / removes an extension entry (thread-safe; `const` because the built-in part is untouched).
  void extend(Entry entry) const {
    std::unique_lock lock(mutex_);
    check_new(entry.name);
    entry.builtin = false;
    std::string name = entry.name;  // copied first: the entry is moved below
    extensions_.emplace(std::move(name), std::make_shared<const Entry>(std::move(entry)));
  }
  void retract(std::string_view name) const {
    std::unique_lock lock(mutex_);
    const auto it = extensions_.find(name);
    if (it == extensions_.end()) {
      throw KeyError(str("'", name, "' is not a ", kind_, " registered as an extension",
                         builtins_.count(name) ? " (it is built in)" : ""));
    }
    extensions_.erase(it);
  }

  void retract_all_extensions() const {
    std::unique_lock lock(mutex_);
    extensions_.clear();
  }

  bool contains(std::string_view name) const {
    std::shared_lock lock(mutex_);
    return builtins_.count(name) || extensions_.count(name);
  }

  // The entry (shared: an extension retracted meanwhile stays valid for whoever holds it).
  EntryPtr find(std::string_view name) const {
    std::shared_lock lock(mutex_);
    if (const auto it = builtins_.find(name); it != builtins_.end()) return it->second;
    if (const auto it = extensions_.find(name); it != extensions_.end()) return it->second;
    std::string known;
    for (const auto& entry : entries_locked()) known += (known.empty() ? "" : ", ") + entry->name;
    throw KeyError(str("unknown ", kind_, " '", name, "'; registered: ", known.empty() ? "(none)" : known));
  }

  std::shared_ptr<Product> make(std::string_view name, const ParamArgs& args) const {
    const EntryPtr entry = find(name);
    return entry->factory(Params(entry->name, entry->params, args));
  }

  std::shared_ptr<Product> make(std::string_view spec) const {
    const auto [name, args] = parse_spec(spec);
    return make(name, args);
  }

  // Every entry, built-in and extension, sorted by name.
  std::vector<EntryPtr> entries() const {
    std::shared_lock lock(mutex_);
    return entries_locked();
  }

  const std::string& kind() const { return kind_; }

 private:
  void check_new(const std::string& name) const {
    if (name.empty()) throw ValueError(str(kind_, " name is empty"));
    if (builtins_.count(name) || extensions_.count(name))
      throw ValueError(str(kind_, " '", name, "' is already registered"));
  }
  std::vector<EntryPtr> entries_locked() const {
    std::vector<EntryPtr> out;
    for (const auto& [n, e] : builtins_) out.push_back(e);
    for (const auto& [n, e] : extensions_) out.push_back(e);
    std::sort(out.begin(), out.end(), [](const EntryPtr& a, const EntryPtr& b) { return a->name < b->name; });
    return out;
  }

  std::string kind_;
  bool frozen_ = false;
  std::map<std::string, EntryPtr, std::less<>> builtins_;
  mutable std::map<std::string, EntryPtr, std::less<>> extensions_;
  mutable std::shared_mutex mutex_;
};

}  // namespace servelab
