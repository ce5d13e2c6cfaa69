#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "servelab/core/errors.hpp"
#include "servelab/core/params.hpp"
#include "servelab/core/registry.hpp"

namespace servelab {
namespace {

std::vector<ParamSpec> specs() {
  ParamSpec order{"order", ParamType::String, std::string("fifo"), "queue order", {}, {}, false, {"fifo", "edf"}};
  ParamSpec batch{"max_batch", ParamType::Int, std::int64_t{8}, "largest batch", 1.0, 1024.0, false, {}};
  ParamSpec sizes{"sizes", ParamType::FloatList, std::vector<double>{}, "sizes", 0.0, {}, false, {}};
  ParamSpec flag{"adaptive", ParamType::Bool, false, "adapt", {}, {}, false, {}};
  return {ParamSpec::positive("rate", std::nullopt, "queries per second"), order, batch, sizes, flag};
}

template <typename E>
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Params, DefaultsAndCoercion) {
  const Params p("toy", specs(), {{"rate", std::int64_t{100}}, {"max_batch", 4.0}});
  EXPECT_DOUBLE_EQ(p.get_float("rate"), 100.0);
  EXPECT_EQ(p.get_int("max_batch"), 4);
  EXPECT_EQ(p.get_string("order"), "fifo");
  EXPECT_FALSE(p.get_bool("adaptive"));
  EXPECT_EQ(p.describe(), "toy(rate=100, order='fifo', max_batch=4, sizes=[], adaptive=false)");
}

TEST(Params, ErrorsNameEntryParameterAndValue) {
  EXPECT_EQ(error_of<ValueError>([] { Params("toy", specs(), {}); }), "toy: parameter 'rate' is required");
  EXPECT_EQ(error_of<ValueError>([] { Params("toy", specs(), {{"rate", -3.0}}); }), "toy: rate=-3 must be > 0");
  EXPECT_EQ(error_of<ValueError>([] { Params("toy", specs(), {{"rate", std::nan("")}}); }), "toy: rate=nan is NaN");
  EXPECT_EQ(error_of<ValueError>([] {
              Params("toy", specs(), {{"rate", std::numeric_limits<double>::infinity()}});
            }),
            "toy: rate=inf must be finite");
  EXPECT_EQ(error_of<ValueError>([] {
              Params("toy", specs(), {{"rate", 1.0}, {"max_batch", 2.5}});
            }),
            "toy: max_batch=2.5 is not a int");
  EXPECT_EQ(error_of<ValueError>([] {
              Params("toy", specs(), {{"rate", 1.0}, {"max_batch", std::int64_t{0}}});
            }),
            "toy: max_batch=0 must be >= 1");
  EXPECT_EQ(error_of<ValueError>([] {
              Params("toy", specs(), {{"rate", 1.0}, {"order", std::string("lifo")}});
            }),
            "toy: order='lifo' is not one of 'fifo', 'edf'");
  EXPECT_EQ(error_of<ValueError>([] { Params("toy", specs(), {{"rate", true}}); }), "toy: rate=true is not a float");
  EXPECT_EQ(error_of<ValueError>([] {
              Params("toy", specs(), {{"rate", 1.0}, {"sizes", std::vector<double>{1, -2}}});
            }),
            "toy: sizes=-2 (element 1 of sizes) must be >= 0");
  EXPECT_EQ(error_of<KeyError>([] {
              Params("toy", specs(), {{"rat", 1.0}});
            }),
            "toy has no parameter 'rat'; its parameters are: rate, order, max_batch, sizes, adaptive");
}

TEST(SpecParser, ParsesValuesOfEveryType) {
  const auto [name, args] = parse_spec(" kairos( qos_ms = 350, xi=0.98, mode=artifact, on=true, w=[1, 2.5] , s='a b')");
  EXPECT_EQ(name, "kairos");
  EXPECT_EQ(std::get<std::int64_t>(args.at("qos_ms")), 350);
  EXPECT_DOUBLE_EQ(std::get<double>(args.at("xi")), 0.98);
  EXPECT_EQ(std::get<std::string>(args.at("mode")), "artifact");
  EXPECT_TRUE(std::get<bool>(args.at("on")));
  EXPECT_EQ(std::get<std::vector<double>>(args.at("w")), (std::vector<double>{1, 2.5}));
  EXPECT_EQ(std::get<std::string>(args.at("s")), "a b");
  EXPECT_TRUE(parse_spec("fcfs").second.empty());
  EXPECT_TRUE(parse_spec("fcfs()").second.empty());
  EXPECT_DOUBLE_EQ(std::get<double>(parse_spec("p(x=-1e-3)").second.at("x")), -1e-3);
}

TEST(SpecParser, ErrorsPointAtTheCharacter) {
  EXPECT_EQ(error_of<ValueError>([] { parse_spec("p(x=1"); }), "spec 'p(x=1' at character 6: expected ')'");
  EXPECT_EQ(error_of<ValueError>([] { parse_spec("p(x=1, x=2)"); }),
            "spec 'p(x=1, x=2)' at character 10: parameter 'x' is given twice");
  EXPECT_EQ(error_of<ValueError>([] { parse_spec("p(x=[1, y])"); }),
            "spec 'p(x=[1, y])' at character 9: 'y' is not a number");
  EXPECT_EQ(error_of<ValueError>([] { parse_spec("(x=1)"); }), "spec '(x=1)' at character 1: expected a name");
  EXPECT_EQ(error_of<ValueError>([] { parse_spec("p(x='a)"); }), "spec 'p(x='a)' at character 5: unterminated string");
  EXPECT_EQ(error_of<ValueError>([] { parse_spec("p() q"); }),
            "spec 'p() q' at character 5: unexpected text after ')'");
}

struct Thing {
  double rate;
};

TEST(Registry, BuildsByNameAndSpecAndListsSorted) {
  Registry<Thing> registry("thing");
  registry.add({"zeta", "last", {}, [](const Params&) { return std::make_shared<Thing>(Thing{0}); }});
  registry.add({"alpha", "first", {ParamSpec::positive("rate", 1.0, "r")}, [](const Params& p) {
                  return std::make_shared<Thing>(Thing{p.get_float("rate")});
                }});
  EXPECT_DOUBLE_EQ(registry.make("alpha", {})->rate, 1.0);
  EXPECT_DOUBLE_EQ(registry.make("alpha(rate=7)")->rate, 7.0);
  const auto entries = registry.entries();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0]->name, "alpha");
  EXPECT_EQ(error_of<KeyError>([&] { registry.make("beta", {}); }), "unknown thing 'beta'; registered: alpha, zeta");
  EXPECT_EQ(error_of<ValueError>([&] {
              registry.add({"alpha", "", {}, nullptr});
            }),
            "thing 'alpha' is already registered");
  EXPECT_EQ(error_of<ValueError>([&] { registry.make("alpha(rate=0)"); }), "alpha: rate=0 must be > 0");
}

}  // namespace
}  // namespace servelab
