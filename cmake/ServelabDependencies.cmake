# Every third-party package the core needs, found in one place (the optional executor backends
# and the LP solver are detected in ServelabBackends.cmake).
find_package(Python 3.10 REQUIRED COMPONENTS Interpreter Development.Module)
find_package(pybind11 CONFIG REQUIRED)
find_package(Threads REQUIRED)
# Boost.Random: header-only, platform-independent distributions (see servelab/core/rng.hpp).
find_package(Boost 1.74 CONFIG REQUIRED)
# Eigen: the MDP solvers' sparse matrices and the Bayesian-optimisation search's linear algebra.
find_package(Eigen3 3.3 CONFIG REQUIRED)
# nlohmann::json: RAMSIS policy files.
find_package(nlohmann_json 3.2 CONFIG REQUIRED)
