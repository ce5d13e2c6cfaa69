// Placeholder: the MDP container and builder; the solvers come with their own files.
#include "servelab/solvers/mdp/mdp.hpp"

namespace servelab::solvers::mdp {}  // namespace servelab::solvers::mdp
