#include "servelab/systems/infaas/metadata_store.hpp"

#include <algorithm>
#include <cmath>

#include "servelab/core/errors.hpp"

namespace servelab::infaas {

std::string_view state_name(VariantState state) {
  switch (state) {
    case VariantState::Inactive:
      return "inactive";
    case VariantState::Active:
      return "active";
    case VariantState::Overloaded:
      return "overloaded";
    case VariantState::Interfered:
      return "interfered";
  }
  return "?";
}

VariantState parse_state(std::string_view name) {
  for (auto s : {VariantState::Inactive, VariantState::Active, VariantState::Overloaded, VariantState::Interfered}) {
    if (state_name(s) == name) return s;
  }
  throw ValueError(str("state='", name, "' is not one of inactive, active, overloaded, interfered"));
}

MetadataStore::MetadataStore(std::vector<Variant> variants) : variants_(std::move(variants)) {
  if (variants_.empty()) throw ValueError("variants is empty: register at least one variant");
  for (std::size_t i = 0; i < variants_.size(); ++i) {
    validate(variants_[i], i);
    const auto [it, fresh] = by_name_.emplace(variants_[i].name, static_cast<VariantId>(i));
    if (!fresh)
      throw ValueError(str("variants[", i, "].name='", variants_[i].name, "' repeats variants[", it->second, "]"));
    by_task_[variants_[i].task].push_back(static_cast<VariantId>(i));
    by_architecture_[variants_[i].architecture].push_back(static_cast<VariantId>(i));
  }
  const auto most_accurate_first = [this](VariantId a, VariantId b) {
    return variants_[a].accuracy != variants_[b].accuracy ? variants_[a].accuracy > variants_[b].accuracy : a < b;
  };
  for (auto& [_, ids] : by_task_) std::sort(ids.begin(), ids.end(), most_accurate_first);
  instances_.resize(variants_.size());
  active_.assign(variants_.size(), 0);
}

void MetadataStore::check_variant(VariantId v) const {
  if (v < 0 || v >= num_variants()) throw KeyError(str("variant=", v, " is not in 0..", num_variants() - 1));
}

void MetadataStore::check_worker(WorkerId w) const {
  if (w < 0 || w >= num_workers()) throw KeyError(str("worker=", w, " is not in 0..", num_workers() - 1));
  if (!workers_[w].alive) throw ValueError(str("worker=", w, " was removed"));
}

const Variant& MetadataStore::variant(VariantId v) const {
  check_variant(v);
  return variants_[v];
}

VariantId MetadataStore::variant_id(std::string_view name) const {
  const auto it = by_name_.find(std::string(name));
  if (it == by_name_.end()) throw KeyError(str("variant '", name, "' is not registered"));
  return it->second;
}

const std::vector<VariantId>& MetadataStore::by_task(std::string_view task) const {
  const auto it = by_task_.find(std::string(task));
  if (it == by_task_.end()) throw KeyError(str("task '", task, "' has no registered variant"));
  return it->second;
}

const std::vector<VariantId>& MetadataStore::by_architecture(std::string_view architecture) const {
  const auto it = by_architecture_.find(std::string(architecture));
  if (it == by_architecture_.end()) throw KeyError(str("model '", architecture, "' is not registered"));
  return it->second;
}

std::vector<std::string> MetadataStore::tasks() const {
  std::vector<std::string> out;
  for (const auto& [t, _] : by_task_) out.push_back(t);
  std::sort(out.begin(), out.end());
  return out;
}

WorkerId MetadataStore::add_worker(std::string_view hardware) {
  if (hardware.empty()) throw ValueError("hardware is empty");
  const auto id = static_cast<WorkerId>(workers_.size());
  workers_.push_back({std::string(hardware), 0.0, true});
  by_hardware_[std::string(hardware)].emplace(0.0, id);
  return id;
}

void MetadataStore::remove_worker(WorkerId w) {
  check_worker(w);
  for (VariantId v = 0; v < num_variants(); ++v) {
    if (state(v, w) != VariantState::Inactive) unload(v, w);
  }
  by_hardware_[workers_[w].hardware].erase({workers_[w].utilisation, w});
  workers_[w].alive = false;
}

bool MetadataStore::alive(WorkerId w) const { return w >= 0 && w < num_workers() && workers_[w].alive; }

const std::string& MetadataStore::worker_hardware(WorkerId w) const {
  if (w < 0 || w >= num_workers()) throw KeyError(str("worker=", w, " is not in 0..", num_workers() - 1));
  return workers_[w].hardware;
}

double MetadataStore::utilisation(WorkerId w) const {
  check_worker(w);
  return workers_[w].utilisation;
}

void MetadataStore::set_utilisation(WorkerId w, double u) {
  check_worker(w);
  if (!(std::isfinite(u) && u >= 0)) throw ValueError(str("utilisation=", u, " must be >= 0 and finite"));
  auto& set = by_hardware_[workers_[w].hardware];
  set.erase({workers_[w].utilisation, w});
  workers_[w].utilisation = u;
  set.emplace(u, w);
}

const std::set<std::pair<double, WorkerId>>& MetadataStore::workers_of(std::string_view hardware) const {
  static const std::set<std::pair<double, WorkerId>> none;
  const auto it = by_hardware_.find(std::string(hardware));
  return it == by_hardware_.end() ? none : it->second;
}

void MetadataStore::load(VariantId v, WorkerId w) { set_state(v, w, VariantState::Active); }

void MetadataStore::unload(VariantId v, WorkerId w) { set_state(v, w, VariantState::Inactive); }

void MetadataStore::set_state(VariantId v, WorkerId w, VariantState s) {
  check_variant(v);
  check_worker(w);
  if (variants_[v].hardware != workers_[w].hardware) {
    throw ValueError(str("variant '", variants_[v].name, "' runs on ", variants_[v].hardware, " but worker=", w, " is ",
                         workers_[w].hardware));
  }
  auto& list = instances_[v];
  const auto it = std::find_if(list.begin(), list.end(), [w](const Instance& i) { return i.worker == w; });
  if (it != list.end() && it->state == VariantState::Active) --active_[v];
  if (s == VariantState::Inactive) {
    if (it != list.end()) list.erase(it);
    return;
  }
  if (it == list.end()) {
    list.push_back({w, s});
  } else {
    it->state = s;
  }
  if (s == VariantState::Active) ++active_[v];
}

VariantState MetadataStore::state(VariantId v, WorkerId w) const {
  check_variant(v);
  for (const Instance& i : instances_[v]) {
    if (i.worker == w) return i.state;
  }
  return VariantState::Inactive;
}

const std::vector<Instance>& MetadataStore::instances(VariantId v) const {
  check_variant(v);
  return instances_[v];
}

std::int32_t MetadataStore::active_instances(VariantId v) const {
  check_variant(v);
  return active_[v];
}

}  // namespace servelab::infaas
