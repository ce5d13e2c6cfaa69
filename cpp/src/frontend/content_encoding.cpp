#include "servelab/frontend/content_encoding.hpp"

#include <boost/beast/core/string.hpp>
#include <boost/beast/zlib/inflate_stream.hpp>

#include "servelab/core/errors.hpp"
#include "servelab/frontend/errors.hpp"
#include "servelab/frontend/py_text.hpp"

namespace servelab::frontend {
namespace {

namespace zlib = boost::beast::zlib;

FrontendError unreadable(const std::string& why) { return invalid("the request body could not be read: " + why); }

// Where the deflate data of a gzip member starts (RFC 1952).
std::size_t gzip_header(std::string_view b) {
  if (b.size() < 10 || static_cast<unsigned char>(b[0]) != 0x1f || static_cast<unsigned char>(b[1]) != 0x8b ||
      b[2] != 8) {
    throw unreadable("the body is not gzip data");
  }
  const auto flags = static_cast<unsigned char>(b[3]);
  std::size_t at = 10;
  auto need = [&](std::size_t n) {
    if (at + n > b.size()) throw unreadable("the gzip header is cut short");
  };
  if (flags & 4) {  // FEXTRA
    need(2);
    at += 2 + (static_cast<unsigned char>(b[at]) | (static_cast<unsigned char>(b[at + 1]) << 8));
  }
  for (const unsigned char text : {8, 16}) {  // FNAME, FCOMMENT: zero-terminated
    if (flags & text) {
      const auto end = b.find('\0', at);
      if (end == std::string_view::npos) throw unreadable("the gzip header is cut short");
      at = end + 1;
    }
  }
  if (flags & 2) at += 2;  // FHCRC
  need(0);
  return at;
}

// Where the deflate data of a zlib stream starts (RFC 1950); 0 for raw deflate data.
std::size_t zlib_header(std::string_view b) {
  if (b.size() >= 2) {
    const auto cmf = static_cast<unsigned char>(b[0]), flg = static_cast<unsigned char>(b[1]);
    if ((cmf & 0x0f) == 8 && (cmf * 256 + flg) % 31 == 0) {
      if (flg & 0x20) throw unreadable("a deflate body with a preset dictionary is not supported");
      return 2;
    }
  }
  return 0;
}

std::string inflate(std::string_view data, std::int64_t limit) {
  zlib::inflate_stream stream;
  std::string out;
  zlib::z_params zs;
  zs.next_in = data.data();
  zs.avail_in = data.size();
  char chunk[16384];
  for (;;) {
    zs.next_out = chunk;
    zs.avail_out = sizeof chunk;
    boost::system::error_code ec;
    stream.write(zs, zlib::Flush::sync, ec);
    out.append(chunk, sizeof chunk - zs.avail_out);
    if (static_cast<std::int64_t>(out.size()) > limit) {
      throw FrontendError(ErrorKind::TooLarge, str("the request body is over the limit max_body_bytes=", limit));
    }
    if (ec == zlib::error::end_of_stream) return out;
    if (ec == zlib::error::need_buffers) {
      if (zs.avail_in == 0) throw unreadable("the compressed body ends early");
      continue;
    }
    if (ec) throw unreadable("the compressed body is not valid: " + ec.message());
    if (zs.avail_in == 0 && zs.avail_out != 0) throw unreadable("the compressed body ends early");
  }
}

}  // namespace

std::string decode_content(std::string body, std::string_view encoding_text, std::int64_t max_body_bytes) {
  namespace beast = boost::beast;
  const beast::string_view encoding(encoding_text.data(), encoding_text.size());
  if (encoding.empty() || beast::iequals(encoding, "identity")) return body;
  if (beast::iequals(encoding, "gzip") || beast::iequals(encoding, "x-gzip")) {
    const auto start = gzip_header(body);
    return inflate(std::string_view(body).substr(start), max_body_bytes);
  }
  if (beast::iequals(encoding, "deflate")) {
    const auto start = zlib_header(body);
    return inflate(std::string_view(body).substr(start), max_body_bytes);
  }
  throw unreadable("Content-Encoding " + py_repr(encoding_text) + " is not supported (gzip, deflate or identity)");
}

}  // namespace servelab::frontend
