// Request bodies sent compressed (Content-Encoding gzip or deflate), inflated as the Python engine
// reads them: over max_body_bytes once inflated is too_large (413), not inflatable is invalid.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace servelab::frontend {

// `body` inflated per `encoding` ("gzip", "x-gzip", "deflate"; "" and "identity": as is).
std::string decode_content(std::string body, std::string_view encoding, std::int64_t max_body_bytes);

}  // namespace servelab::frontend
