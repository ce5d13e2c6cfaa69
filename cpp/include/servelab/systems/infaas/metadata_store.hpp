// The Metadata Store (Sec. 3.2, 5): static variant data with indexed look-ups and the dynamic
// per-worker state the Dispatcher and the autoscalers read.
//
// Indexes (built once; the paper uses Redis hash maps and sorted sets):
//  - task -> its variants by accuracy, highest first: the variants meeting an accuracy floor are a
//    prefix found by binary search;
//  - architecture -> its variants (queries that name a registered model);
//  - variant -> the workers holding an instance, with the instance's state;
//  - hardware -> its workers ordered by (utilisation, id): the least-utilised worker is the first.
// Utilisation is a number in [0, inf) the monitoring reports (busy fraction; > 1 means queued work).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "servelab/systems/infaas/variant.hpp"

namespace servelab::infaas {

using VariantId = std::int32_t;
using WorkerId = std::int32_t;

// Fig. 4's state machine, per (variant, worker) instance; Inactive means not loaded there.
enum class VariantState : std::uint8_t { Inactive, Active, Overloaded, Interfered };
std::string_view state_name(VariantState state);
VariantState parse_state(std::string_view name);  // ValueError naming the value

struct Instance {
  WorkerId worker = -1;
  VariantState state = VariantState::Active;
};

class MetadataStore {
 public:
  explicit MetadataStore(std::vector<Variant> variants);  // validated; names unique

  // --- static data ---
  std::int32_t num_variants() const { return static_cast<std::int32_t>(variants_.size()); }
  const Variant& variant(VariantId v) const;
  VariantId variant_id(std::string_view name) const;  // KeyError
  const std::vector<Variant>& variants() const { return variants_; }
  // A task's variants, most accurate first (KeyError for an unknown task).
  const std::vector<VariantId>& by_task(std::string_view task) const;
  const std::vector<VariantId>& by_architecture(std::string_view architecture) const;
  bool has_task(std::string_view task) const { return by_task_.contains(std::string(task)); }
  bool has_architecture(std::string_view a) const { return by_architecture_.contains(std::string(a)); }
  std::vector<std::string> tasks() const;

  // --- workers ---
  WorkerId add_worker(std::string_view hardware);
  void remove_worker(WorkerId worker);  // unloads its instances
  std::int32_t num_workers() const { return static_cast<std::int32_t>(workers_.size()); }
  bool alive(WorkerId worker) const;
  const std::string& worker_hardware(WorkerId worker) const;
  double utilisation(WorkerId worker) const;
  void set_utilisation(WorkerId worker, double utilisation);  // >= 0, finite
  // The live workers of a hardware type, least utilised first (empty when none).
  const std::set<std::pair<double, WorkerId>>& workers_of(std::string_view hardware) const;

  // --- instances (Fig. 4) ---
  void load(VariantId v, WorkerId worker);  // Active; ValueError on a hardware mismatch
  void unload(VariantId v, WorkerId worker);
  void set_state(VariantId v, WorkerId worker, VariantState state);  // Inactive unloads
  VariantState state(VariantId v, WorkerId worker) const;
  const std::vector<Instance>& instances(VariantId v) const;
  std::int32_t active_instances(VariantId v) const;  // in the Active state

 private:
  struct Worker {
    std::string hardware;
    double utilisation = 0.0;
    bool alive = true;
  };
  void check_variant(VariantId v) const;
  void check_worker(WorkerId w) const;

  std::vector<Variant> variants_;
  std::unordered_map<std::string, VariantId> by_name_;
  std::unordered_map<std::string, std::vector<VariantId>> by_task_, by_architecture_;
  std::vector<Worker> workers_;
  std::unordered_map<std::string, std::set<std::pair<double, WorkerId>>> by_hardware_;
  std::vector<std::vector<Instance>> instances_;  // by variant
  std::vector<std::int32_t> active_;              // by variant
};

}  // namespace servelab::infaas
