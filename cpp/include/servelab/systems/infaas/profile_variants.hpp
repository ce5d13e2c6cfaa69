// The bridge from a servelab Profile to INFaaS variants: every (model, hardware) pair with a
// latency curve is one variant of architecture `model` on `hardware`, with the profile's latency
// by batch (decision statistic), load time, memory, accuracy and price. This is how variants made
// by servelab's executors and profiler reach INFaaS; a catalogue built in Python becomes a
// Profile the same way (servelab.infaas.catalogue).
//
// Choices: the task is one ("default") for a profile: every model is a candidate for every query,
// subject to its accuracy floor; a model without an accuracy counts as 0 (it meets no floor > 0);
// cost_per_s is the hardware's price / 3600 (the worker's price: one instance per worker).
#pragma once

#include <string>
#include <vector>

#include "servelab/profile/profile.hpp"
#include "servelab/systems/infaas/variant.hpp"

namespace servelab::infaas {

inline constexpr const char* kProfileTask = "default";

// Variant names are "<model>@<hardware>". Only hardware in `hardware` (all when empty).
std::vector<Variant> variants_from_profile(const profile::Profile& profile, profile::Statistic statistic,
                                           const std::vector<std::string>& hardware = {});

}  // namespace servelab::infaas
