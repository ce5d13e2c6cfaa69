// getVariant for a query (Sec. 4.1), and the brute-force search it is checked against.
//
// A query asks either for an application's task with goals (accuracy floor, latency budget at its
// batch size) or for a registered model (architecture), which any of its variants serves.
//  1. Active: among matching variants with an instance in the Active state (Overloaded and
//     Interfered instances are avoided), the cheapest variant (the paper is silent on which; its
//     objective is cost), on its least-utilised worker.
//  2. Inactive: the matching variant with the lowest load + inference latency, loaded on the
//     least-utilised live worker of its hardware that does not hold it yet.
//  3. Closest: nothing matches; the variant nearest the goals (relative accuracy shortfall plus
//     relative latency excess), with the reason, so the caller can accept it or refuse.
// Other ties (the paper is silent) go to the cheaper variant, the less utilised worker, the faster
// variant, then the lower ids: both searches apply the same order, so they agree exactly.
#pragma once

#include <cstdint>
#include <string>

#include "servelab/systems/infaas/metadata_store.hpp"

namespace servelab::infaas {

struct Requirements {
  std::string task;          // an application's task (used when architecture is empty)
  std::string architecture;  // a registered model: its variants only, goals not checked
  double accuracy = 0.0;     // floor, fraction
  double latency_ms = 0.0;   // budget for one batch; <= 0: none
  std::int32_t batch = 1;
};

enum class ChoiceKind : std::uint8_t { Active, Inactive, Closest, None };
std::string_view choice_kind_name(ChoiceKind kind);

struct Choice {
  ChoiceKind kind = ChoiceKind::None;
  VariantId variant = -1;
  WorkerId worker = -1;  // -1: no live worker can host it (the VM-Autoscaler's case)
  std::string reason;    // why the goals are not met (Closest) or nothing was found (None)
};

// KeyError for an unknown task or architecture; ValueError for a bad batch or NaN goals.
Choice get_variant(const MetadataStore& store, const Requirements& req);
Choice get_variant_brute_force(const MetadataStore& store, const Requirements& req);

}  // namespace servelab::infaas
