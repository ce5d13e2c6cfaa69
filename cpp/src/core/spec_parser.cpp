// A small recursive-descent parser for registry spec strings: name(key=value, ...), where a value
// is a number, true/false, a quoted or bare string, or a [list, of, numbers].
#include <cctype>
#include <charconv>

#include "servelab/core/registry.hpp"

namespace servelab {
namespace {

class SpecParser {
 public:
  explicit SpecParser(std::string_view text) : text_(text) {}

  std::pair<std::string, ParamArgs> parse() {
    skip_space();
    std::string name = identifier("a name");
    ParamArgs args;
    skip_space();
    if (at_end()) return {name, args};
    expect('(');
    skip_space();
    if (!consume(')')) {
      do {
        skip_space();
        std::string key = identifier("a parameter name");
        skip_space();
        expect('=');
        skip_space();
        if (args.count(key)) fail(str("parameter '", key, "' is given twice"));
        args[key] = value();
        skip_space();
      } while (consume(','));
      expect(')');
    }
    skip_space();
    if (!at_end()) fail("unexpected text after ')'");
    return {name, args};
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw ValueError(str("spec '", text_, "' at character ", pos_ + 1, ": ", what));
  }
  bool at_end() const { return pos_ >= text_.size(); }
  void skip_space() {
    while (!at_end() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool consume(char c) {
    skip_space();
    if (!at_end() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!consume(c)) fail(str("expected '", c, "'"));
  }
  static bool is_word(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == '+';
  }
  std::string identifier(const char* what) {
    const std::size_t start = pos_;
    while (!at_end() && is_word(text_[pos_])) ++pos_;
    if (start == pos_) fail(str("expected ", what));
    return std::string(text_.substr(start, pos_ - start));
  }
  double number() {
    const std::size_t start = pos_;
    while (!at_end() && is_word(text_[pos_])) ++pos_;
    const std::string_view word = text_.substr(start, pos_ - start);
    double x = 0;
    const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), x);
    if (ec != std::errc() || end != word.data() + word.size()) {
      pos_ = start;
      fail(str("'", word, "' is not a number"));
    }
    return x;
  }
  ParamValue value() {
    if (at_end()) fail("expected a value");
    const char c = text_[pos_];
    if (c == '[') {
      ++pos_;
      std::vector<double> list;
      skip_space();
      if (!consume(']')) {
        do {
          skip_space();
          list.push_back(number());
        } while (consume(','));
        expect(']');
      }
      return list;
    }
    if (c == '\'' || c == '"') {
      const std::size_t close = text_.find(c, pos_ + 1);
      if (close == std::string_view::npos) fail("unterminated string");
      std::string s(text_.substr(pos_ + 1, close - pos_ - 1));
      pos_ = close + 1;
      return s;
    }
    const std::size_t start = pos_;
    while (!at_end() && is_word(text_[pos_])) ++pos_;
    const std::string_view word = text_.substr(start, pos_ - start);
    if (word.empty()) fail("expected a value");
    if (word == "true" || word == "True") return true;
    if (word == "false" || word == "False") return false;
    std::int64_t i = 0;
    if (auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), i);
        ec == std::errc() && end == word.data() + word.size()) {
      return i;
    }
    double d = 0;
    if (auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), d);
        ec == std::errc() && end == word.data() + word.size()) {
      return d;
    }
    return std::string(word);  // a bare word is a string: fcfs(order=base_first)
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

}  // namespace

std::pair<std::string, ParamArgs> parse_spec(std::string_view spec) { return SpecParser(spec).parse(); }

}  // namespace servelab
