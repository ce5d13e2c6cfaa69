// The deep-RL tuners RRL is compared with (Sec. 6.1), as documented simplifications.
//
// Both observe the current configuration (each knob scaled onto [0, 1]), the measured arrival rate
// (divided by the rate scale) and the last episode's cost, and act by moving one knob one grid step
// up or down, or keeping the configuration (2 x knobs + 1 actions; a move past a bound keeps it), as
// CAPES tunes parameters by increments. The reward is minus the objective's cost. They start from
// the centre of the space (the paper does not say where).
//
// CAPES-like (Li et al., SC'17): deep Q-learning. Q-network with 2 hidden layers of 200 ReLU units
// (the paper's Sec. 6.1), RMSProp with learning rate 0.001, Huber loss, replay memory, minibatches
// of 32, a target network refreshed every 100 steps, discount 0.9, epsilon-greedy exploration
// decaying linearly from 1 to 0.05 over the first 1,000 steps. Simplified: one training step per
// episode, no separate observation averaging over "ticks".
// DeepRM-like (Mao et al., HotNets'16): REINFORCE. Policy network with 1 hidden layer of 20 ReLU
// units (Sec. 6.1), softmax over the actions, RMSProp with learning rate 0.001; after every 20
// episodes, the discounted returns (0.9) of that trajectory minus a running-mean baseline weight
// the log-probability gradients. Simplified: DeepRM schedules jobs from a resource image; here
// its policy-gradient learner moves parallelism knobs, as the paper adapted it.
// All randomness (weights, exploration, replay) comes from the seed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "servelab/systems/rrl/config_space.hpp"
#include "servelab/systems/rrl/episode.hpp"
#include "servelab/systems/rrl/tuner.hpp"

namespace servelab::rrl {

struct DeepRlOptions {
  int hidden = 0;  // 0: the method's default (CAPES 200, DeepRM 20)
  double learning_rate = 0.001;
  double gamma = 0.9;
  int epsilon_steps = 1000;  // CAPES: steps over which epsilon decays from 1 to 0.05
  int batch = 32;            // CAPES: minibatch
  int target_every = 100;    // CAPES: target network refresh
  int trajectory = 20;       // DeepRM: episodes per policy-gradient update
  std::size_t memory = 10000;
  void validate() const;
};

// method: "capes" or "deeprm".
std::unique_ptr<Tuner> make_deep_rl(const std::string& method, const ConfigSpace& space, std::vector<Setting> settings,
                                    double rate_scale, Objective objective, DeepRlOptions options, std::uint64_t seed);

}  // namespace servelab::rrl
