// How executors written in Python join and leave _core's executor registry (bind_executors.cpp
// keeps which module each entry came from; servelab.register_executor calls these).
#pragma once

#include <string>

#include "servelab/serve/executor_registry.hpp"

namespace servelab::bindings {

// Adds `entry` as an extension from Python `module`; ValueError when the name is taken.
void join_python_executor(serve::ExecutorRegistry::Entry entry, const std::string& module);
// Removes it; KeyError for a name that is not a Python executor.
void retract_python_executor(const std::string& name);

}  // namespace servelab::bindings
