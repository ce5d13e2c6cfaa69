// PluginTable: built-in entries, modules joining with their origin, the loader asked once per
// unknown name (outside the lock, so the module can join from inside it), and clear refusals.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "servelab/core/errors.hpp"
#include "servelab/core/plugin_table.hpp"

namespace servelab {
namespace {

using Fn = std::function<int(int)>;

TEST(PluginTable, HoldsBuiltInsAndModulesWithTheirOrigin) {
  PluginTable<Fn> table("doubler", {{"two", [](int x) { return 2 * x; }}});
  EXPECT_EQ(table.origin("two"), "servelab._core");
  table.join(
      "three", [](int x) { return 3 * x; }, "servelab._mine");
  EXPECT_EQ(table.names(), (std::vector<std::string>{"three", "two"}));
  EXPECT_EQ(table.origin("three"), "servelab._mine");
  EXPECT_EQ(table.origin("four"), "");
  EXPECT_EQ((*table.find("three"))(5), 15);
  EXPECT_EQ(table.listed(), "three, two");
  // A module joining again replaces its own entry; another origin may not take the name.
  table.join(
      "three", [](int x) { return 30 * x; }, "servelab._mine");
  EXPECT_EQ((*table.find("three"))(1), 30);
  EXPECT_THROW(table.join(
                   "three", [](int x) { return x; }, "servelab._other"),
               ValueError);
  EXPECT_THROW(table.join(
                   "two", [](int x) { return x; }, "servelab._other"),
               ValueError);
  EXPECT_THROW(table.join(
                   "", [](int x) { return x; }, "m"),
               ValueError);
  EXPECT_THROW(table.join("five", nullptr, "m"), ValueError);
}

TEST(PluginTable, AsksTheLoaderForAnUnknownNameAndReportsWhyNot) {
  PluginTable<Fn> table("doubler", {});
  std::vector<std::string> asked;
  table.set_loader([&](const std::string& name) -> std::string {
    asked.push_back(name);
    if (name == "seven") {
      table.join(
          "seven", [](int x) { return 7 * x; }, "servelab._seven");  // as a module does on import
      return {};
    }
    return name == "broken" ? "its module failed to load: no library" : "";
  });
  EXPECT_EQ((*table.find("seven"))(2), 14);
  EXPECT_EQ((*table.find("seven"))(3), 21);  // loaded once: no second question
  std::string why = "unchanged";
  EXPECT_FALSE(table.find("broken", &why).has_value());
  EXPECT_EQ(why, "its module failed to load: no library");
  EXPECT_FALSE(table.find("nobody", &why).has_value());
  EXPECT_EQ(why, "");
  EXPECT_EQ(asked, (std::vector<std::string>{"seven", "broken", "nobody"}));
}

}  // namespace
}  // namespace servelab
