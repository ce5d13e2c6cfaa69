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

template <typename Product>
class Registry {
 public:
  using Factory = std::function<std::shared_ptr<Product>(const Params&)>;

  struct Entry {
    std::string name;
    std::string doc;
    std::vector<ParamSpec> params;
    Factory factory;
  };

  // `kind` names what the registry holds in messages: "arrival process", "scheduler".
  explicit Registry(std::string kind) : kind_(std::move(kind)) {}

  void add(Entry entry) {
    if (entry.name.empty()) throw ValueError(str(kind_, " name is empty"));
    if (entries_.count(entry.name)) throw ValueError(str(kind_, " '", entry.name, "' is already registered"));
    entries_.emplace(entry.name, std::move(entry));
  }

  bool contains(std::string_view name) const { return entries_.find(name) != entries_.end(); }

  const Entry& find(std::string_view name) const {
    const auto it = entries_.find(name);
    if (it == entries_.end()) {
      std::string known;
      for (const auto& [n, e] : entries_) known += (known.empty() ? "" : ", ") + n;
      throw KeyError(str("unknown ", kind_, " '", name, "'; registered: ", known.empty() ? "(none)" : known));
    }
    return it->second;
  }

  std::shared_ptr<Product> make(std::string_view name, const ParamArgs& args) const {
    const Entry& entry = find(name);
    return entry.factory(Params(entry.name, entry.params, args));
  }

  std::shared_ptr<Product> make(std::string_view spec) const {
    const auto [name, args] = parse_spec(spec);
    return make(name, args);
  }

  // Entries sorted by name.
  std::vector<const Entry*> entries() const {
    std::vector<const Entry*> out;
    for (const auto& [name, e] : entries_) out.push_back(&e);
    return out;
  }

  const std::string& kind() const { return kind_; }

 private:
  std::string kind_;
  std::map<std::string, Entry, std::less<>> entries_;
};

}  // namespace servelab
