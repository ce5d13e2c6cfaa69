#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "servelab/core/build_info.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/core/interrupt.hpp"

namespace servelab::core {
namespace {

using namespace std::chrono_literals;

TEST(Errors, StrJoinsValues) { EXPECT_EQ(str("batch=", 3, " rate=", 1.5), "batch=3 rate=1.5"); }

TEST(Errors, TypesMapToStandardCategories) {
  EXPECT_THROW(throw ValueError("x"), std::invalid_argument);
  EXPECT_THROW(throw KeyError("x"), std::out_of_range);
  EXPECT_THROW(throw RuntimeError("x"), std::runtime_error);
}

TEST(Interrupt, NoScopeMeansNoInterruption) {
  EXPECT_NO_THROW(check_interrupt());
  EXPECT_GT(spin_for(1ms), 0);
}

TEST(Interrupt, ScopeThatAsksToStopThrowsPromptly) {
  int asked = 0;
  InterruptScope scope([&] { return ++asked >= 3; }, 1ms);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(spin_for(10s), Interrupted);
  EXPECT_EQ(asked, 3);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
}

TEST(Interrupt, ScopesNestAndRestore) {
  InterruptScope outer([] { return true; }, 0ns);
  {
    InterruptScope inner([] { return false; }, 0ns);
    EXPECT_NO_THROW(check_interrupt());
  }
  EXPECT_THROW(check_interrupt(), Interrupted);
}

TEST(Interrupt, ScopeIsPerThread) {
  InterruptScope scope([] { return true; }, 0ns);
  bool thrown = false;
  std::thread other([&] {
    try {
      spin_for(1ms);
    } catch (const Interrupted&) {
      thrown = true;
    }
  });
  other.join();
  EXPECT_FALSE(thrown);
}

TEST(Interrupt, NegativeDurationIsRejected) { EXPECT_THROW(spin_for(-1ns), ValueError); }

TEST(BuildInfo, ReportsVersionAndStandard) {
  const auto info = build_info();
  EXPECT_FALSE(info.version.empty());
  EXPECT_GE(info.cxx_standard, 202002L);
  EXPECT_EQ(info.onednn.compiled, !info.onednn.version.empty());
}

}  // namespace
}  // namespace servelab::core
