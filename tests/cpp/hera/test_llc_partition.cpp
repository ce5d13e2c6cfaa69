// Hera's LLC ways applied through resctrl while serving (servelab/serve/llc_partition.hpp), against
// a temporary folder laid out like /sys/fs/resctrl: the support probe and its unsupported paths,
// the CAT masks, the groups and task ids the worker threads write, and the groups' removal.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "servelab/catalogue/catalogue.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/serve/llc_partition.hpp"
#include "servelab/serve/resctrl.hpp"
#include "servelab/serve/server.hpp"
#include "sim_fixture.hpp"

namespace servelab::serve {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A resctrl-shaped tree: 16 ways, two L3 domains, 16 CLOSIDs.
class MockResctrl : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("servelab-resctrl-test-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "info" / "L3");
    write(root_ / "info" / "L3" / "cbm_mask", "ffff\n");
    write(root_ / "info" / "L3" / "num_closids", "16\n");
    write(root_ / "info" / "L3" / "min_cbm_bits", "1\n");
    write(root_ / "schemata", "    L3:0=ffff;1=ffff\n    MB:0=100;1=100\n");
    write(root_ / "tasks", "");
  }
  void TearDown() override { fs::remove_all(root_); }

  // The folders under the root other than info: the groups.
  std::vector<std::string> groups() const {
    std::vector<std::string> out;
    for (const auto& entry : fs::directory_iterator(root_))
      if (entry.is_directory() && entry.path().filename() != "info") out.push_back(entry.path().filename());
    std::sort(out.begin(), out.end());
    return out;
  }
  std::string group(const char* end, int ways) const {
    return "servelab-" + std::to_string(::getpid()) + "-" + end + "-" + std::to_string(ways);
  }

  fs::path root_;
};

std::int64_t this_tid() { return static_cast<std::int64_t>(::syscall(SYS_gettid)); }

TEST_F(MockResctrl, ProbeReadsTheCacheAndItsDomains) {
  const auto s = probe_resctrl(root_);
  ASSERT_TRUE(s.supported) << s.reason;
  EXPECT_EQ(s.cbm_mask, "ffff");
  EXPECT_EQ(s.ways, 16);
  EXPECT_EQ(s.first_way, 0);
  EXPECT_EQ(s.num_closids, 16);
  EXPECT_EQ(s.domains, (std::vector<std::string>{"0", "1"}));
}

TEST_F(MockResctrl, ProbeSaysWhyItIsUnsupported) {
  EXPECT_NE(probe_resctrl(root_ / "absent").reason.find("does not exist"), std::string::npos);

  write(root_ / "info" / "L3" / "cbm_mask", "f0f\n");
  auto s = probe_resctrl(root_);
  EXPECT_FALSE(s.supported);
  EXPECT_NE(s.reason.find("'f0f' is not a contiguous hex bit mask"), std::string::npos) << s.reason;
  write(root_ / "info" / "L3" / "cbm_mask", "zz\n");
  EXPECT_NE(probe_resctrl(root_).reason.find("'zz' is not a contiguous"), std::string::npos);
  write(root_ / "info" / "L3" / "cbm_mask", "ffff\n");

  write(root_ / "schemata", "MB:0=100\n");
  EXPECT_NE(probe_resctrl(root_).reason.find("has no L3 line"), std::string::npos);

  fs::remove_all(root_ / "info" / "L3");
  EXPECT_NE(probe_resctrl(root_).reason.find("info/L3 is absent"), std::string::npos);

  fs::remove(root_ / "schemata");
  s = probe_resctrl(root_);
  EXPECT_FALSE(s.supported);
  EXPECT_NE(s.reason.find("is not mounted"), std::string::npos) << s.reason;
}

TEST_F(MockResctrl, ProbeSaysWhenTheRootIsNotWritable) {
  if (::getuid() == 0) GTEST_SKIP() << "root may write a read-only folder";
  fs::permissions(root_, fs::perms::owner_read | fs::perms::owner_exec);
  const auto s = probe_resctrl(root_);
  fs::permissions(root_, fs::perms::owner_all);
  EXPECT_FALSE(s.supported);
  EXPECT_NE(s.reason.find("is not writable by this user"), std::string::npos) << s.reason;
}

TEST_F(MockResctrl, MasksAreContiguousAtEitherEndWithinTheCache) {
  auto s = probe_resctrl(root_);
  EXPECT_EQ(cat_mask(s, 4, true), "f");
  EXPECT_EQ(cat_mask(s, 4, false), "f000");
  EXPECT_EQ(cat_mask(s, 16, false), "ffff");
  EXPECT_THROW(cat_mask(s, 0, true), ValueError);
  try {
    cat_mask(s, 17, true);
    FAIL() << "17 ways fitted 16";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("llc_ways=17"), std::string::npos) << e.what();
  }
  // A cache whose ways start above bit 0, needing two ways at least.
  write(root_ / "info" / "L3" / "cbm_mask", "7f0\n");
  write(root_ / "info" / "L3" / "min_cbm_bits", "2\n");
  s = probe_resctrl(root_);
  ASSERT_TRUE(s.supported) << s.reason;
  EXPECT_EQ(cat_mask(s, 2, true), "30");
  EXPECT_EQ(cat_mask(s, 2, false), "600");
  EXPECT_THROW(cat_mask(s, 1, true), ValueError);
  EXPECT_EQ(schemata_line(s, "30"), "L3:0=30;1=30\n");
}

TEST_F(MockResctrl, WorkersJoinSharedGroupsAndEmptyOnesGo) {
  LlcPartitioner part(root_, probe_resctrl(root_), /*low_model=*/0);
  std::int64_t tid0 = 0, tid1 = 0, tid2 = 0;
  std::thread([&] {
    tid0 = this_tid();
    part.apply(0, 0, 6);
  }).join();
  std::thread([&] {
    tid1 = this_tid();
    part.apply(1, 1, 10);
  }).join();
  std::thread([&] {
    tid2 = this_tid();
    part.apply(2, 0, 6);  // the same model and ways as worker 0: the same group
  }).join();
  EXPECT_EQ(groups(), (std::vector<std::string>{group("high", 10), group("low", 6)}));
  EXPECT_EQ(read(root_ / group("low", 6) / "schemata"), "L3:0=3f;1=3f\n");
  EXPECT_EQ(read(root_ / group("high", 10) / "schemata"), "L3:0=ffc0;1=ffc0\n");
  EXPECT_EQ(read(root_ / group("low", 6) / "tasks"), std::to_string(tid0) + "\n" + std::to_string(tid2) + "\n");
  EXPECT_EQ(read(root_ / group("high", 10) / "tasks"), std::to_string(tid1) + "\n");

  // Worker 1 shrinks to 8 ways: its old group, now empty, is removed.
  part.apply(1, 1, 8);
  EXPECT_EQ(groups(), (std::vector<std::string>{group("high", 8), group("low", 6)}));
  EXPECT_EQ(read(root_ / group("high", 8) / "schemata"), "L3:0=ff00;1=ff00\n");

  const auto records = part.records();
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[1].group, group("high", 8));
  EXPECT_EQ(records[1].mask, "ff00");
  EXPECT_EQ(records[1].ways, 8);
  EXPECT_EQ(records[1].applied, 2);
  EXPECT_EQ(records[0].thread_id, tid0);
  EXPECT_TRUE(records[0].error.empty());

  EXPECT_TRUE(part.remove_groups().empty());
  EXPECT_TRUE(groups().empty());
  EXPECT_EQ(part.created_groups().size(), 3u);
  EXPECT_EQ(read(root_ / "schemata"), "    L3:0=ffff;1=ffff\n    MB:0=100;1=100\n");  // the root untouched
  part.apply(0, 0, 4);                                                                // after the end: nothing
  EXPECT_TRUE(groups().empty());
}

TEST_F(MockResctrl, AFailureIsRecordedOncePerWorkerAndItsGroupStays) {
  LlcPartitioner part(root_, probe_resctrl(root_), 0);
  part.apply(0, 0, 4);
  part.apply(0, 0, 20);  // more ways than the cache has
  part.apply(0, 0, 0);
  const auto r = part.records().at(0);
  EXPECT_EQ(r.failed, 2);
  EXPECT_EQ(r.applied, 1);
  EXPECT_NE(r.error.find("llc_ways=20"), std::string::npos) << r.error;
  EXPECT_EQ(r.group, group("low", 4));  // still where its last good setting put it
  EXPECT_EQ(groups(), std::vector<std::string>{group("low", 4)});
}

TEST_F(MockResctrl, AGroupTheKernelRefusesIsRecorded) {
  LlcPartitioner part(root_, probe_resctrl(root_), 0);
  fs::create_directories(root_ / group("low", 4) / "schemata");  // a folder where the file goes
  part.apply(0, 0, 4);
  const auto r = part.records().at(0);
  EXPECT_EQ(r.failed, 1);
  EXPECT_NE(r.error.find("schemata"), std::string::npos) << r.error;
  EXPECT_TRUE(r.group.empty());
}

TEST_F(MockResctrl, AServedRunAppliesEachWorkersSettingOnItsThread) {
  auto spec = testing::replay_spec({0.0, 0.001, 0.002, 0.003, 0.004, 0.005},
                                   {{"fast", 2, {}, {{"llc_ways", 5}}}, {"slow", 1, {}, {{"llc_ways", 3}}}});
  EXPECT_EQ(first_model(spec), 0);
  auto part = std::make_shared<LlcPartitioner>(root_, probe_resctrl(root_), first_model(spec));
  ServeOptions options;
  options.executor = llc_partitioned_executors(emulated_executors(), part);
  auto scheduler = catalogue::schedulers().make("fcfs");
  const auto result = serve(spec, *scheduler, options);
  EXPECT_EQ(result.world, "serve");
  const auto records = part->records();
  ASSERT_FALSE(records.empty());
  for (const auto& r : records) {
    const int ways = r.worker < 2 ? 5 : 3;
    EXPECT_EQ(r.ways, ways);
    EXPECT_EQ(r.group, group("low", ways));
    EXPECT_EQ(r.applied, 1);  // once, before its first batch
    EXPECT_GT(r.thread_id, 0);
    EXPECT_TRUE(r.error.empty()) << r.error;
    const auto tasks = read(root_ / r.group / "tasks");
    EXPECT_NE(tasks.find(std::to_string(r.thread_id) + "\n"), std::string::npos);
  }
  EXPECT_FALSE(groups().empty());
  EXPECT_TRUE(part->remove_groups().empty());
  EXPECT_TRUE(groups().empty());
}

// Records the knobs it is handed.
class KnobRecorder final : public Executor {
 public:
  explicit KnobRecorder(ConfigKnobs* seen) : seen_(seen) {}
  void run(const ExecRequest& request) override { *seen_ = request.config; }
  std::vector<std::string> knobs() const override { return {"threads"}; }
  std::string describe() const override { return "recorder"; }

 private:
  ConfigKnobs* seen_;
};

TEST_F(MockResctrl, TheInnerExecutorSeesOnlyItsOwnKnobs) {
  auto spec = testing::replay_spec({0.0}, {{"fast", 1, {}}});
  auto part = std::make_shared<LlcPartitioner>(root_, probe_resctrl(root_), 0);
  ConfigKnobs seen;
  auto factory =
      llc_partitioned_executors([&](sched::WorkerId, sched::HardwareId,
                                    const cluster::RunSpec&) { return std::make_unique<KnobRecorder>(&seen); },
                                part);
  auto executor = factory(0, 0, spec);
  // llc_first_way and llc_share_ways: the serving loop's answer for instances of declared machines.
  EXPECT_EQ(executor->knobs(), (std::vector<std::string>{"threads", "llc_ways", "llc_first_way", "llc_share_ways"}));
  const ConfigKnobs config{{"llc_ways", 7}, {"threads", 2}};
  Rng rng(1, "service");
  const std::vector<workload::QueryId> queries{0};
  executor->run(ExecRequest{0, 0, 0, 1, queries, config, rng});
  EXPECT_EQ(seen, (ConfigKnobs{{"threads", 2}}));
  EXPECT_EQ(part->records().at(0).ways, 7);
  EXPECT_EQ(groups(), std::vector<std::string>{group("low", 7)});
}

TEST(LlcPartitioner, RefusesAnUnsupportedRoot) {
  EXPECT_THROW(LlcPartitioner("/nonexistent", probe_resctrl("/nonexistent"), 0), ValueError);
}

}  // namespace
}  // namespace servelab::serve
