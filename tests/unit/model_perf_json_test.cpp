// The perf file's JSON form: a lossless round trip, precise refusals of bad files, and where the
// file is looked for.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "model/cost_model.hpp"
#include "model/perf_json.hpp"

namespace strider::model {
namespace {

bool Mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Replaces the first `from` in `text` (which must be there) by `to`.
std::string ReplaceFirst(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "'" << from << "' not in the text";
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// The built-in defaults plus every optional part a measured file has: device and peer-write
// transfer tables, LogGOPS samples, and strings that need escaping. Values with long mantissas
// check that numbers survive the text form bit for bit.
PerfData FullData() {
  PerfData d = built_in_defaults();
  d.created = "2025-01-02T03:04:05Z";
  d.tool = "strider-measure 1.0 \"quoted\" \\ back\tslash";
  d.machine = {"NVIDIA H100 80GB HBM3", 12040, "Open MPI v4.1.6, package: Debian"};
  d.cuda_runtime = "12.4";
  d.launch_sync = 1.2345678901234567e-5;
  d.d2h.y[3] = 0.1 + 0.2;                      // 0.30000000000000004: needs all 17 digits
  d.pack[1].stride_ratio = 2.718281828459045;  // not a small integer, so not exact in a float
  d.pack[2].irregular = true;                  // an irregular (block-list) table
  Table1D device;
  for (double s = 1; s <= 1 << 20; s *= 8) {
    device.x.push_back(s);
    device.y.push_back(2.000000000000001e-6 + s / 3e11);
  }
  d.transfers[Placement::SameNode].device = device;
  Table1D peer = device;
  for (double& y : peer.y) y *= 0.7;
  d.transfers[Placement::SameNode].peer_write = peer;
  d.loggops["oneshot"] = {{1, 1.5e-6, 2.5e-6, 1e-6, 6.000000000000001e-6},
                          {1 << 20, 3e-5, 4e-5, 2e-5, 1.1e-4}};
  d.loggops["host"] = {{64, 1e-6, 1e-6, 5e-7, 3e-6}};
  d.loggops["empty"] = {};
  return d;
}

void ExpectSameTable(const Table1D& a, const Table1D& b, const std::string& what) {
  EXPECT_EQ(a.x, b.x) << what;
  EXPECT_EQ(a.y, b.y) << what;
}

// Field by field, with exact double equality: the text form must lose nothing.
void ExpectSameData(const PerfData& a, const PerfData& b) {
  EXPECT_EQ(a.schema_version, b.schema_version);
  EXPECT_EQ(a.created, b.created);
  EXPECT_EQ(a.tool, b.tool);
  EXPECT_EQ(a.machine.gpu, b.machine.gpu);
  EXPECT_EQ(a.machine.driver, b.machine.driver);
  EXPECT_EQ(a.machine.mpi, b.machine.mpi);
  EXPECT_EQ(a.cuda_runtime, b.cuda_runtime);
  EXPECT_EQ(a.launch_sync, b.launch_sync);
  ExpectSameTable(a.d2h, b.d2h, "d2h");
  ExpectSameTable(a.h2d, b.h2d, "h2d");
  ASSERT_EQ(a.transfers.size(), b.transfers.size());
  for (const auto& [placement, t] : a.transfers) {
    ASSERT_TRUE(b.transfers.count(placement)) << to_string(placement);
    const TransferTables& u = b.transfers.at(placement);
    ExpectSameTable(t.host, u.host, std::string(to_string(placement)) + " host");
    ASSERT_EQ(t.device.has_value(), u.device.has_value()) << to_string(placement);
    if (t.device)
      ExpectSameTable(*t.device, *u.device, std::string(to_string(placement)) + " device");
    ASSERT_EQ(t.peer_write.has_value(), u.peer_write.has_value()) << to_string(placement);
    if (t.peer_write)
      ExpectSameTable(*t.peer_write, *u.peer_write,
                      std::string(to_string(placement)) + " peer_write");
  }
  ASSERT_EQ(a.pack.size(), b.pack.size());
  for (std::size_t i = 0; i < a.pack.size(); ++i) {
    const PackTable &p = a.pack[i], &q = b.pack[i];
    EXPECT_EQ(p.target, q.target) << i;
    EXPECT_EQ(p.direction, q.direction) << i;
    EXPECT_EQ(p.dims, q.dims) << i;
    EXPECT_EQ(p.stride_ratio, q.stride_ratio) << i;
    EXPECT_EQ(p.irregular, q.irregular) << i;
    EXPECT_EQ(p.seconds.rows, q.seconds.rows) << i;
    EXPECT_EQ(p.seconds.columns, q.seconds.columns) << i;
    EXPECT_EQ(p.seconds.values, q.seconds.values) << i;
  }
  ASSERT_EQ(a.loggops.size(), b.loggops.size());
  for (const auto& [method, samples] : a.loggops) {
    ASSERT_TRUE(b.loggops.count(method)) << method;
    const auto& other = b.loggops.at(method);
    ASSERT_EQ(samples.size(), other.size()) << method;
    for (std::size_t i = 0; i < samples.size(); ++i) {
      EXPECT_EQ(samples[i].bytes, other[i].bytes) << method << " " << i;
      EXPECT_EQ(samples[i].send_overhead, other[i].send_overhead) << method << " " << i;
      EXPECT_EQ(samples[i].recv_overhead, other[i].recv_overhead) << method << " " << i;
      EXPECT_EQ(samples[i].stream_gap, other[i].stream_gap) << method << " " << i;
      EXPECT_EQ(samples[i].pingpong, other[i].pingpong) << method << " " << i;
    }
  }
}

TEST(ModelPerfJson, TheFullDataIsValidToBeginWith) {
  // Otherwise the failure tests below could fail for the wrong reason.
  EXPECT_EQ(validate(FullData()), "");
}

TEST(ModelPerfJson, RoundTripPreservesEveryField) {
  const PerfData original = FullData();
  PerfData back;
  std::string error;
  ASSERT_TRUE(from_json_text(to_json_text(original), back, error)) << error;
  EXPECT_EQ(error, "");
  ExpectSameData(original, back);
  // `built_in` says where the data came from, not what it holds: it is not written, and what
  // is read from a file is a measurement.
  EXPECT_TRUE(original.built_in);
  EXPECT_FALSE(back.built_in);
}

TEST(ModelPerfJson, RoundTripOfPlainDefaultsHasNoLoggopsSection) {
  const PerfData original = built_in_defaults();
  const std::string text = to_json_text(original);
  EXPECT_FALSE(Mentions(text, "\"loggops\""));
  EXPECT_TRUE(Mentions(text, "\"schema\": \"strider-perf\""));
  PerfData back;
  std::string error;
  ASSERT_TRUE(from_json_text(text, back, error)) << error;
  ExpectSameData(original, back);
  EXPECT_TRUE(back.loggops.empty());
  EXPECT_TRUE(back.transfers.at(Placement::SameNode).device.has_value());
  EXPECT_FALSE(back.transfers.at(Placement::SameNode).peer_write.has_value());
}

TEST(ModelPerfJson, WritingTwiceGivesTheSameText) {
  // Text -> data -> text is a fixed point: nothing is reordered or reformatted by a reload.
  const std::string text = to_json_text(FullData());
  PerfData back;
  std::string error;
  ASSERT_TRUE(from_json_text(text, back, error)) << error;
  EXPECT_EQ(to_json_text(back), text);
}

// Expects `text` refused with an error containing `why`, and `out` left untouched.
void ExpectRefused(const std::string& text, const std::string& why) {
  PerfData out;
  out.tool = "untouched";
  std::string error;
  EXPECT_FALSE(from_json_text(text, out, error)) << why;
  EXPECT_TRUE(Mentions(error, why)) << "error '" << error << "' should mention '" << why << "'";
  EXPECT_EQ(out.tool, "untouched");
}

TEST(ModelPerfJson, RefusesTextThatIsNotJson) {
  ExpectRefused("", "malformed");
  ExpectRefused("hello, world", "malformed");
  ExpectRefused("{\"schema\": \"strider-perf\",", "malformed");
}

TEST(ModelPerfJson, RefusesATruncatedFile) {
  const std::string text = to_json_text(FullData());
  for (std::size_t keep : {text.size() / 10, text.size() / 2, text.size() - 3}) {
    ExpectRefused(text.substr(0, keep), "malformed");
  }
}

TEST(ModelPerfJson, RefusesJsonThatIsNotAPerfFile) {
  ExpectRefused("[1, 2, 3]", "not a Strider perf file");
  ExpectRefused("{}", "not a Strider perf file");
  ExpectRefused("42", "not a Strider perf file");
  const std::string text = to_json_text(FullData());
  ExpectRefused(ReplaceFirst(text, "\"schema\": \"strider-perf\"", "\"schema\": \"other-perf\""),
                "not a Strider perf file");
}

TEST(ModelPerfJson, RefusesAnotherSchemaVersionAndSaysWhichOne) {
  const std::string text = to_json_text(FullData());
  ASSERT_TRUE(Mentions(text, "\"schema_version\": 1"));
  for (const char* version : {"2", "0", "999"}) {
    const std::string other =
        ReplaceFirst(text, "\"schema_version\": 1", std::string("\"schema_version\": ") + version);
    ExpectRefused(other, std::string("schema version ") + version);
    ExpectRefused(other, "reads 1");
  }
}

TEST(ModelPerfJson, RefusesMissingSections) {
  const std::string text = to_json_text(FullData());
  ExpectRefused(ReplaceFirst(text, "\"copies\":", "\"kopies\":"), "copies");
  ExpectRefused(ReplaceFirst(text, "\"transfers\":", "\"transferz\":"), "transfers");
  ExpectRefused(ReplaceFirst(text, "\"pack\": [", "\"packs\": ["), "pack");
  ExpectRefused(ReplaceFirst(text, "\"machine\":", "\"machina\":"), "machine");
  ExpectRefused(ReplaceFirst(text, "\"launch_sync_seconds\":", "\"launch\":"),
                "launch_sync_seconds");
  ExpectRefused(ReplaceFirst(text, "\"d2h\":", "\"d2x\":"), "d2h");
}

TEST(ModelPerfJson, RefusesMissingTables) {
  PerfData no_transfers = FullData();
  no_transfers.transfers.clear();
  ExpectRefused(to_json_text(no_transfers), "no transfer measurements");

  // Each of the six (target, direction) families is required.
  for (Method target : {Method::Device, Method::OneShot, Method::Staged}) {
    for (Direction direction : {Direction::Pack, Direction::Unpack}) {
      PerfData d = FullData();
      std::erase_if(d.pack, [&](const PackTable& p) {
        return p.target == target && p.direction == direction;
      });
      ExpectRefused(to_json_text(d), "pack tables missing");
    }
  }

  PerfData empty_copy = FullData();
  empty_copy.h2d = {};
  ExpectRefused(to_json_text(empty_copy), "h2d: empty axis");
}

TEST(ModelPerfJson, RefusesAPackRowOfTheWrongLength) {
  const std::string text = to_json_text(FullData());
  // One more object size than the rows have times (dump(1) puts one number per line).
  ExpectRefused(ReplaceFirst(text, "\"object_bytes\": [\n", "\"object_bytes\": [\n  32.0,\n"),
                "pack row of the wrong length");
  // One more block size than there are rows: each row is fine, the table is not.
  ExpectRefused(ReplaceFirst(text, "\"block_bytes\": [\n", "\"block_bytes\": [\n  0.5,\n"),
                "rows x columns");
}

TEST(ModelPerfJson, RefusesNegativeOrZeroTimes) {
  PerfData d = FullData();
  d.d2h.y[0] = -1e-6;
  ExpectRefused(to_json_text(d), "d2h: a time that is not positive");

  d = FullData();
  d.pack[5].seconds.values[7] = -3e-6;
  ExpectRefused(to_json_text(d), "pack table: a time that is not positive");

  d = FullData();
  d.transfers[Placement::Remote].host.y.back() = 0;
  ExpectRefused(to_json_text(d), "transfers remote host: a time that is not positive");

  d = FullData();
  d.transfers[Placement::SameNode].device->y[1] = -1;
  ExpectRefused(to_json_text(d), "transfers same-node device");

  d = FullData();
  d.transfers[Placement::SameNode].peer_write->y[2] = 0;
  ExpectRefused(to_json_text(d), "transfers same-node peer_write");

  d = FullData();
  d.launch_sync = -1e-5;
  ExpectRefused(to_json_text(d), "launch_sync not positive");
}

TEST(ModelPerfJson, RefusesPackTablesOfUnknownShapeOrName) {
  PerfData d = FullData();
  d.pack[0].dims = 4;
  ExpectRefused(to_json_text(d), "dims other than 2 or 3");
  d = FullData();
  d.pack[0].stride_ratio = 0.5;
  ExpectRefused(to_json_text(d), "stride ratio below 1");
  const std::string text = to_json_text(FullData());
  ExpectRefused(ReplaceFirst(text, "\"target\": \"mapped\"", "\"target\": \"pinned\""),
                "unknown pack target 'pinned'");
  // Names are exact: no other spelling of a known one.
  ExpectRefused(ReplaceFirst(text, "\"target\": \"staged\"", "\"target\": \"Staged\""),
                "unknown pack target 'Staged'");
  ExpectRefused(ReplaceFirst(text, "\"direction\": \"unpack\"", "\"direction\": \"both\""),
                "unknown value 'both'");
  ExpectRefused(ReplaceFirst(text, "\"same-node\":", "\"next-door\":"), "placement next-door");
}

TEST(ModelPerfJson, PackTargetsAreWrittenAsDeviceMappedAndStaged) {
  PerfData d = built_in_defaults();
  const std::string text = to_json_text(d);
  EXPECT_TRUE(Mentions(text, "\"target\": \"device\""));
  EXPECT_TRUE(Mentions(text, "\"target\": \"mapped\""));
  EXPECT_TRUE(Mentions(text, "\"target\": \"staged\""));
  // Each name reads back as its own target: a file with only the staged tables renamed to
  // "mapped" loses the staged family (and is refused), so the names are not interchangeable.
  PerfData back;
  std::string error;
  ASSERT_TRUE(from_json_text(text, back, error)) << error;
  for (Method target : {Method::Device, Method::OneShot, Method::Staged}) {
    EXPECT_EQ(std::count_if(back.pack.begin(), back.pack.end(),
                            [&](const PackTable& p) { return p.target == target; }),
              std::count_if(d.pack.begin(), d.pack.end(),
                            [&](const PackTable& p) { return p.target == target; }))
        << static_cast<int>(target);
  }
  std::string renamed = text;
  for (auto at = renamed.find("\"target\": \"staged\""); at != std::string::npos;
       at = renamed.find("\"target\": \"staged\"", at)) {
    renamed.replace(at, std::string("\"target\": \"staged\"").size(), "\"target\": \"mapped\"");
  }
  ExpectRefused(renamed, "pack tables missing");
}

// A fake environment for perf_file_path().
auto Env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(ModelPerfFilePath, StriderPerfFileWinsOverEverything) {
  EXPECT_EQ(
      perf_file_path(Env(
          {{"STRIDER_PERF_FILE", "/x/p.json"}, {"XDG_CACHE_HOME", "/xdg"}, {"HOME", "/home/u"}})),
      "/x/p.json");
}

TEST(ModelPerfFilePath, ThenXdgCacheHome) {
  EXPECT_EQ(perf_file_path(Env({{"XDG_CACHE_HOME", "/xdg"}, {"HOME", "/home/u"}})),
            "/xdg/strider/perf.json");
  EXPECT_EQ(perf_file_path(Env({{"XDG_CACHE_HOME", "/xdg"}})), "/xdg/strider/perf.json");
}

TEST(ModelPerfFilePath, ThenHomeCache) {
  EXPECT_EQ(perf_file_path(Env({{"HOME", "/home/u"}})), "/home/u/.cache/strider/perf.json");
}

TEST(ModelPerfFilePath, EmptyWhenNothingIsSet) { EXPECT_EQ(perf_file_path(Env({})), ""); }

TEST(ModelPerfFilePath, EmptyVariablesCountAsUnset) {
  EXPECT_EQ(perf_file_path(Env({{"STRIDER_PERF_FILE", ""}, {"XDG_CACHE_HOME", "/xdg"}})),
            "/xdg/strider/perf.json");
  EXPECT_EQ(perf_file_path(Env({{"XDG_CACHE_HOME", ""}, {"HOME", "/home/u"}})),
            "/home/u/.cache/strider/perf.json");
  EXPECT_EQ(perf_file_path(Env({{"STRIDER_PERF_FILE", ""}, {"XDG_CACHE_HOME", ""}, {"HOME", ""}})),
            "");
}

}  // namespace
}  // namespace strider::model
