// servelab._core.HttpEngine: the C++ HTTP/REST engine of the front-end over a serving session,
// started by ServingSession.start_http_engine (bind_session.cpp).
#pragma once

#include <pybind11/pybind11.h>

#include "servelab/serve/session.hpp"

namespace servelab::bindings {

// Starts the engine on `session` with the options servelab.frontend passes (see bind_frontend.cpp).
pybind11::object start_http_engine(serve::Session& session, const pybind11::kwargs& options);

}  // namespace servelab::bindings
