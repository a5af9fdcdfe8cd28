// The runtime side of the model: which perf file is used (and why not), the one-time load and
// warning, and the per-thread memo of choices.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "model/perf_json.hpp"
#include "model/selector.hpp"

namespace strider::model {
namespace {

namespace fs = std::filesystem;

bool Mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

const MachineIdentity kHere = {"NVIDIA H100 80GB HBM3", 12040, "Open MPI v4.1.6"};

// A measured-looking file for kHere: the defaults with a recognizable launch_sync.
PerfData MeasuredHere() {
  PerfData d = built_in_defaults();
  d.built_in = false;
  d.tool = "strider-measure";
  d.machine = kHere;
  d.launch_sync = 7.5e-6;
  return d;
}

class ModelLoadModel : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "strider_model_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr) << pattern;
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  // The loader must fall back: built-in defaults, the source says so, a warning says why.
  static void ExpectDefaults(const LoadedModel& m, const std::string& why) {
    EXPECT_TRUE(m.data.built_in);
    EXPECT_EQ(m.data.launch_sync, built_in_defaults().launch_sync);
    EXPECT_EQ(m.source, "built-in defaults");
    EXPECT_FALSE(m.warning.empty());
    EXPECT_TRUE(Mentions(m.warning, why))
        << "warning '" << m.warning << "' should mention '" << why << "'";
  }
  fs::path dir_;
};

TEST_F(ModelLoadModel, MissingFileGivesDefaultsAndNamesThePath) {
  const std::string path = (dir_ / "absent.json").string();
  const LoadedModel m = load_model(path, kHere);
  ExpectDefaults(m, "no perf file at " + path);
  EXPECT_TRUE(Mentions(m.warning, "strider-measure"));  // says what to do about it
}

TEST_F(ModelLoadModel, EmptyPathGivesDefaults) {
  ExpectDefaults(load_model("", kHere), "no perf file path");
}

TEST_F(ModelLoadModel, CorruptFileGivesDefaultsAndSaysItIsMalformed) {
  const std::string path = Write("perf.json", "{\"schema\": \"strider-perf\", \"sche");
  const LoadedModel m = load_model(path, kHere);
  ExpectDefaults(m, "malformed");
  EXPECT_TRUE(Mentions(m.warning, path));
}

TEST_F(ModelLoadModel, EmptyFileGivesDefaults) {
  ExpectDefaults(load_model(Write("perf.json", ""), kHere), "malformed");
}

TEST_F(ModelLoadModel, DirectoryInsteadOfAFileGivesDefaults) {
  fs::create_directory(dir_ / "perf.json");
  const LoadedModel m = load_model((dir_ / "perf.json").string(), kHere);
  EXPECT_TRUE(m.data.built_in);
  EXPECT_FALSE(m.warning.empty());
}

TEST_F(ModelLoadModel, OtherSchemaVersionGivesDefaultsAndSaysSo) {
  std::string text = to_json_text(MeasuredHere());
  const std::string from = "\"schema_version\": 1";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(text.find(from), from.size(), "\"schema_version\": 2");
  ExpectDefaults(load_model(Write("perf.json", text), kHere), "schema version 2");
}

TEST_F(ModelLoadModel, InvalidTablesGiveDefaultsAndSayWhich) {
  PerfData d = MeasuredHere();
  d.h2d.y[4] = -1;
  ExpectDefaults(load_model(Write("perf.json", to_json_text(d)), kHere), "h2d");
}

TEST_F(ModelLoadModel, FileOfAnotherGpuGivesDefaultsAndNamesBoth) {
  PerfData d = MeasuredHere();
  d.machine.gpu = "NVIDIA A100-SXM4-40GB";
  const LoadedModel m = load_model(Write("perf.json", to_json_text(d)), kHere);
  ExpectDefaults(m, "another machine");
  EXPECT_TRUE(Mentions(m.warning, "A100")) << m.warning;
  EXPECT_TRUE(Mentions(m.warning, "H100")) << m.warning;
}

TEST_F(ModelLoadModel, FileOfAnotherDriverGivesDefaultsAndNamesBoth) {
  PerfData d = MeasuredHere();
  d.machine.driver = 12020;
  const LoadedModel m = load_model(Write("perf.json", to_json_text(d)), kHere);
  ExpectDefaults(m, "another machine");
  EXPECT_TRUE(Mentions(m.warning, "CUDA driver 12020")) << m.warning;
  EXPECT_TRUE(Mentions(m.warning, "12040")) << m.warning;
}

TEST_F(ModelLoadModel, FileOfAnotherMpiGivesDefaultsAndNamesBoth) {
  PerfData d = MeasuredHere();
  d.machine.mpi = "MPICH Version: 4.1";
  const LoadedModel m = load_model(Write("perf.json", to_json_text(d)), kHere);
  ExpectDefaults(m, "another machine");
  EXPECT_TRUE(Mentions(m.warning, "MPICH")) << m.warning;
  EXPECT_TRUE(Mentions(m.warning, "Open MPI")) << m.warning;
}

TEST_F(ModelLoadModel, FileOfThisMachineIsUsedWithoutWarning) {
  const std::string path = Write("perf.json", to_json_text(MeasuredHere()));
  const LoadedModel m = load_model(path, kHere);
  EXPECT_EQ(m.warning, "");
  EXPECT_EQ(m.source, path);
  EXPECT_FALSE(m.data.built_in);
  EXPECT_EQ(m.data.launch_sync, 7.5e-6);  // the file's figure, not the default's
  EXPECT_EQ(m.data.tool, "strider-measure");
  EXPECT_EQ(m.data.machine, kHere);
}

TEST_F(ModelLoadModel, UnknownIdentityUsesAnyValidFile) {
  PerfData d = MeasuredHere();
  d.machine = {"Some Other GPU", 1, "Some Other MPI"};
  const std::string path = Write("perf.json", to_json_text(d));
  const LoadedModel m = load_model(path, std::nullopt);
  EXPECT_EQ(m.warning, "");
  EXPECT_EQ(m.source, path);
  EXPECT_FALSE(m.data.built_in);
  EXPECT_EQ(m.data.launch_sync, 7.5e-6);
}

TEST(ModelIdentity, MismatchNamesTheFirstDifferingFieldAndIsEmptyOnMatch) {
  const MachineIdentity a = {"G", 1, "M"};
  EXPECT_EQ(identity_mismatch(a, a), "");
  EXPECT_TRUE(Mentions(identity_mismatch(a, {"H", 1, "M"}), "GPU 'G'"));
  EXPECT_TRUE(Mentions(identity_mismatch(a, {"G", 2, "M"}), "CUDA driver 1"));
  EXPECT_TRUE(Mentions(identity_mismatch(a, {"G", 1, "N"}), "MPI 'M'"));
}

// ---------------------------------------------------------------------------------------------
// Selector.
// ---------------------------------------------------------------------------------------------

ObjectShape Shape(std::int64_t bytes, std::int64_t block, std::int64_t stride, int dims) {
  ObjectShape s;
  s.bytes = bytes;
  s.block = block;
  s.stride = stride;
  s.dims = dims;
  return s;
}

// Data under which the answer depends on every part of a memo key: the defaults with mapped
// packing 1000 times slower for blocks under 64 bytes (so a sender of small blocks stages, its
// receiver stays one-shot), and GPU-buffer transfers 100 times faster than host ones on the same
// node but 100 times slower between nodes (so a CUDA-aware MPI picks device on the same node
// only).
PerfData Varied() {
  PerfData d = built_in_defaults();
  for (PackTable& p : d.pack) {
    if (p.target != Method::OneShot || p.direction != Direction::Pack) continue;
    const std::size_t n = p.seconds.columns.size();
    for (std::size_t r = 0; r < p.seconds.rows.size(); ++r) {
      if (p.seconds.rows[r] >= 64) continue;
      for (std::size_t c = 0; c < n; ++c) p.seconds.values[r * n + c] *= 1000;
    }
  }
  for (auto& [placement, t] : d.transfers) {
    Table1D device = t.host;
    for (double& y : device.y) y *= placement == Placement::SameNode ? 0.01 : 100;
    t.device = device;
  }
  return d;
}

Selector::Loader LoaderOf(PerfData data, std::string warning = "") {
  return [data = std::move(data), warning = std::move(warning)] {
    return LoadedModel{data, "test", warning};
  };
}

TEST(ModelSelector, MemoKeysTellSidesPlacementsAndAwarenessApart) {
  Selector selector(LoaderOf(Varied()), nullptr);
  const ObjectShape small_blocks = Shape(1 << 20, 1, 2, 2);
  // Every query repeated, in an order where a memo that ignored one key field would answer
  // the second query of a pair with the first's choice.
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(selector.choose(small_blocks, Placement::SameNode, false, false), Method::Staged);
    EXPECT_EQ(selector.choose(small_blocks, Placement::SameNode, false, true), Method::OneShot);
    EXPECT_EQ(selector.choose(small_blocks, Placement::SameNode, true, false), Method::Device);
    EXPECT_EQ(selector.choose(small_blocks, Placement::Remote, true, false), Method::Staged);
    EXPECT_EQ(selector.choose(small_blocks, Placement::Remote, true, true), Method::OneShot);
    EXPECT_EQ(selector.choose(small_blocks, Placement::SameNode, true, true), Method::Device);
  }
}

TEST(ModelSelector, MemoKeysTellShapesApart) {
  Selector selector(LoaderOf(Varied()), nullptr);
  // Same bytes and spacing ratio, blocks of 1 and of 64 bytes: staged, then one-shot.
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(selector.choose(Shape(1 << 20, 1, 2, 2), Placement::SameNode, false, false),
              Method::Staged);
    EXPECT_EQ(selector.choose(Shape(1 << 20, 64, 128, 2), Placement::SameNode, false, false),
              Method::OneShot);
    // Contiguous: nothing to pack, one-shot.
    EXPECT_EQ(
        selector.choose(Shape(1 << 20, 1 << 20, 1 << 20, 1), Placement::SameNode, false, false),
        Method::OneShot);
  }
}

// A random shape where the Varied data's choices differ: small blocks and large, 2D and 3D.
ObjectShape RandomShape(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> log_bytes(0, 30), kind(0, 3), log_ratio(0, 4);
  const std::int64_t bytes = std::int64_t{1} << log_bytes(rng);
  if (kind(rng) == 0) return Shape(bytes, bytes, bytes, 1);
  std::uniform_int_distribution<std::int64_t> block(1, std::min<std::int64_t>(bytes, 256));
  const std::int64_t b = block(rng);
  return Shape(bytes, b, b << log_ratio(rng), 2 + static_cast<int>(rng() % 2));
}

TEST(ModelSelector, ChooseEqualsTheUnmemoizedChoiceForManyShapes) {
  const PerfData data = Varied();
  Selector selector(LoaderOf(data), nullptr);
  const std::uint64_t seed = 31337;
  std::mt19937_64 rng(seed);
  std::vector<ObjectShape> shapes;
  for (int i = 0; i < 3000; ++i) shapes.push_back(RandomShape(rng));
  std::set<Method> seen;
  // Twice over: the first pass fills the memo, the second reads it.
  for (int pass = 0; pass < 2; ++pass) {
    for (const ObjectShape& s : shapes) {
      for (Placement placement : {Placement::SameNode, Placement::Remote}) {
        for (bool aware : {false, true}) {
          for (bool receive : {false, true}) {
            const Method expected = choose(predict(data, s, placement, aware), receive);
            ASSERT_EQ(selector.choose(s, placement, aware, receive), expected)
                << "seed " << seed << " pass " << pass << " bytes " << s.bytes << " block "
                << s.block << " stride " << s.stride << " dims " << s.dims;
            seen.insert(expected);
          }
        }
      }
    }
  }
  EXPECT_EQ(seen.size(), 3u);  // the comparison means something only if answers vary
}

TEST(ModelSelector, ChooseStaysRightPastTheMemoLimit) {
  // More distinct keys than the memo holds (1 << 14), then the first ones again.
  const PerfData data = Varied();
  Selector selector(LoaderOf(data), nullptr);
  auto key = [](int i) { return Shape(1 << 20, 1 + i % 128, (1 + i % 128) * (2 + i / 128), 2); };
  for (int i = 0; i < 20000; ++i) selector.choose(key(i), Placement::SameNode, false, false);
  for (int i = 0; i < 20000; i += 97) {
    EXPECT_EQ(selector.choose(key(i), Placement::SameNode, false, false),
              choose(predict(data, key(i), Placement::SameNode, false), false))
        << i;
  }
}

TEST(ModelSelector, PredictIsTheModelsPredictionOnTheLoadedData) {
  const PerfData data = Varied();
  Selector selector(LoaderOf(data), nullptr);
  const ObjectShape s = Shape(4096, 1, 4, 2);
  const Prediction a = selector.predict(s, Placement::Remote, true);
  const Prediction b = predict(data, s, Placement::Remote, true);
  for (int m = 0; m < kModelledMethods; ++m) {
    EXPECT_EQ(a[m].available, b[m].available);
    EXPECT_EQ(a[m].total(), b[m].total());
  }
}

TEST(ModelSelector, LoadsNothingUntilFirstUseThenExactlyOnce) {
  std::atomic<int> loads{0};
  Selector selector(
      [&] {
        ++loads;
        return LoadedModel{Varied(), "test", ""};
      },
      nullptr);
  EXPECT_EQ(loads.load(), 0);
  selector.choose(Shape(64, 1, 2, 2), Placement::SameNode, false, false);
  EXPECT_EQ(loads.load(), 1);
  for (int i = 0; i < 100; ++i) {
    selector.choose(Shape(64 + i, 1, 2, 2), Placement::Remote, true, true);
    selector.predict(Shape(64 + i, 1, 2, 2), Placement::Remote, true);
    selector.model();
  }
  EXPECT_EQ(loads.load(), 1);
  EXPECT_EQ(selector.model().source, "test");
}

TEST(ModelSelector, ManyThreadsLoadOnceWarnOnceAndAgree) {
  const PerfData data = Varied();
  std::atomic<int> loads{0}, warnings{0};
  std::string warned;
  Selector selector(
      [&] {
        ++loads;
        // Slow, so that the other threads arrive while it runs.
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        return LoadedModel{data, "test", "perf file not used: because"};
      },
      [&](const std::string& w) {
        ++warnings;
        warned = w;
      });
  constexpr int kThreads = 8;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(1000 + t);  // seeds 1000 .. 1007
      for (int i = 0; i < 1500; ++i) {
        const ObjectShape s = RandomShape(rng);
        const bool receive = (i % 2) != 0;
        const Placement placement = (i % 3) != 0 ? Placement::SameNode : Placement::Remote;
        const bool aware = (i % 5) < 2;
        const Method got = (t % 2 == 0 && i % 7 == 0)
                               ? choose(selector.predict(s, placement, aware), receive)
                               : selector.choose(s, placement, aware, receive);
        if (got != choose(predict(data, s, placement, aware), receive)) ++wrong;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(loads.load(), 1);
  EXPECT_EQ(warnings.load(), 1);
  EXPECT_EQ(warned, "perf file not used: because");
  EXPECT_EQ(wrong.load(), 0);
}

TEST(ModelSelector, NoWarningWhenTheLoaderHasNone) {
  int warnings = 0;
  Selector selector(LoaderOf(Varied()), [&](const std::string&) { ++warnings; });
  for (int i = 0; i < 50; ++i)
    selector.choose(Shape(64 * (i + 1), 1, 2, 2), Placement::SameNode, false, false);
  selector.predict(Shape(64, 1, 2, 2), Placement::Remote, true);
  EXPECT_EQ(warnings, 0);
}

TEST(ModelSelector, WarningIsPassedOnceEvenAfterManyCalls) {
  std::vector<std::string> warnings;
  Selector selector(LoaderOf(Varied(), "no perf file"),
                    [&](const std::string& w) { warnings.push_back(w); });
  EXPECT_TRUE(warnings.empty());  // not before the first use
  for (int i = 0; i < 50; ++i) {
    selector.choose(Shape(64 * (i + 1), 1, 2, 2), Placement::SameNode, false, false);
    selector.predict(Shape(64, 1, 2, 2), Placement::Remote, true);
  }
  EXPECT_EQ(warnings, std::vector<std::string>{"no perf file"});
}

TEST(ModelSelector, AWarningWithoutAWarnCallbackIsHarmless) {
  Selector selector(LoaderOf(Varied(), "ignored"), nullptr);
  EXPECT_EQ(selector.model().warning, "ignored");
}

TEST(ModelSelector, ANewSelectorStartsANewMemoEvenAtTheSameAddress) {
  // Two data sets that answer one key differently: the defaults (one-shot) and Varied (staged).
  const ObjectShape s = Shape(1 << 20, 1, 2, 2);
  std::optional<Selector> selector;
  selector.emplace(LoaderOf(built_in_defaults()), nullptr);
  const void* first_address = &*selector;
  EXPECT_EQ(selector->choose(s, Placement::SameNode, false, false), Method::OneShot);
  selector.reset();
  selector.emplace(LoaderOf(Varied()), nullptr);
  ASSERT_EQ(&*selector, first_address);  // what makes a memo keyed by address go wrong
  EXPECT_EQ(selector->choose(s, Placement::SameNode, false, false), Method::Staged);
}

TEST(ModelSelector, TwoLiveSelectorsKeepTheirOwnAnswersWhenInterleaved) {
  const ObjectShape s = Shape(1 << 20, 1, 2, 2);
  Selector defaults(LoaderOf(built_in_defaults()), nullptr);
  Selector varied(LoaderOf(Varied()), nullptr);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(defaults.choose(s, Placement::SameNode, false, false), Method::OneShot);
    EXPECT_EQ(varied.choose(s, Placement::SameNode, false, false), Method::Staged);
  }
}

// The offer verdicts (cost_model.hpp offer_wins) share the memo with the choices: on data where
// device packing of blocks over 256 bytes is 1000 times slower (so offers lose there), the
// memoized verdict equals the unmemoized one for every side and method, queries interleaved
// with choices, and both verdicts occur.
TEST(ModelSelector, OfferVerdictEqualsTheUnmemoizedOneForManyShapes) {
  PerfData data = Varied();
  for (PackTable& p : data.pack) {
    if (p.target != Method::Device) continue;
    const std::size_t n = p.seconds.columns.size();
    for (std::size_t r = 0; r < p.seconds.rows.size(); ++r) {
      if (p.seconds.rows[r] <= 256) continue;
      for (std::size_t c = 0; c < n; ++c) p.seconds.values[r * n + c] *= 1000;
    }
  }
  Selector selector(LoaderOf(data), nullptr);
  std::mt19937_64 rng(4242);
  std::vector<ObjectShape> shapes;
  for (int i = 0; i < 2000; ++i) {
    ObjectShape s = RandomShape(rng);
    if (rng() % 2 == 0 && s.dims > 1) s.block = std::min<std::int64_t>(s.bytes, 1024);
    shapes.push_back(s);
  }
  std::set<bool> seen;
  for (int pass = 0; pass < 2; ++pass) {
    for (const ObjectShape& s : shapes) {
      for (bool aware : {false, true}) {
        for (bool receive : {false, true}) {
          (void)selector.choose(s, Placement::SameNode, aware, receive);
          for (Method m : {Method::OneShot, Method::Staged, Method::Device}) {
            for (bool burst : {false, true}) {
              const bool expected = offer_wins(data, s, aware, receive, m, burst);
              ASSERT_EQ(selector.offer_wins(s, aware, receive, m, burst), expected)
                  << "pass " << pass << " bytes " << s.bytes << " block " << s.block << " stride "
                  << s.stride << " dims " << s.dims << " burst " << burst;
              seen.insert(expected);
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(seen.size(), 2u)
      << "the data should make offers win for some objects and lose for others";
}

}  // namespace
}  // namespace strider::model
