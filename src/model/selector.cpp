#include "model/selector.hpp"

#include <fstream>
#include <sstream>
#include <unordered_map>

#include "model/perf_json.hpp"

namespace strider::model {
namespace {

LoadedModel defaults_because(std::string why) {
  return {built_in_defaults(), "built-in defaults", std::move(why)};
}

struct MemoKey {
  ObjectShape shape;
  Placement placement;
  bool aware;
  bool receive;
  friend bool operator==(const MemoKey& a, const MemoKey& b) {
    return a.shape == b.shape && a.placement == b.placement && a.aware == b.aware &&
           a.receive == b.receive;
  }
};

struct MemoHash {
  std::size_t operator()(const MemoKey& k) const {
    std::uint64_t h = 0x9e3779b97f4a7c15ull;
    auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 0xff51afd7ed558ccdull; h ^= h >> 32; };
    mix(static_cast<std::uint64_t>(k.shape.bytes));
    mix(static_cast<std::uint64_t>(k.shape.block));
    mix(static_cast<std::uint64_t>(k.shape.stride));
    mix(static_cast<std::uint64_t>(k.shape.dims) | (std::uint64_t{k.shape.irregular} << 8) |
        (static_cast<std::uint64_t>(k.placement) << 9) | (std::uint64_t{k.aware} << 10) |
        (std::uint64_t{k.receive} << 11));
    return static_cast<std::size_t>(h);
  }
};

struct ThreadMemo {
  std::uint64_t owner = 0;
  std::unordered_map<MemoKey, Transfer, MemoHash> choices;
};

// Bounds the memo of an application that sends ever new sizes.
constexpr std::size_t kMemoLimit = 1 << 14;

std::atomic<std::uint64_t> g_next_id{1};

}  // namespace

LoadedModel load_model(const std::string& path, const std::optional<MachineIdentity>& here) {
  if (path.empty()) return defaults_because("no perf file path (neither HOME nor XDG_CACHE_HOME)");
  std::ifstream in(path);
  if (!in) return defaults_because("no perf file at " + path + " (run strider-measure)");
  std::stringstream text;
  text << in.rdbuf();
  LoadedModel loaded;
  std::string error;
  if (!from_json_text(text.str(), loaded.data, error)) {
    return defaults_because("perf file " + path + " not used: " + error);
  }
  if (here) {
    if (const std::string diff = identity_mismatch(loaded.data.machine, *here); !diff.empty()) {
      return defaults_because("perf file " + path + " is for another machine (" + diff +
                              "); run strider-measure here");
    }
  }
  loaded.source = path;
  return loaded;
}

Selector::Selector(Loader loader, std::function<void(const std::string&)> warn)
    : loader_(std::move(loader)), warn_(std::move(warn)), id_(g_next_id.fetch_add(1)) {}

const LoadedModel& Selector::model() {
  std::call_once(once_, [this] {
    model_ = std::make_unique<LoadedModel>(loader_());
    if (!model_->warning.empty() && warn_) warn_(model_->warning);
  });
  return *model_;
}

Prediction Selector::predict(const ObjectShape& shape, Placement placement, bool aware) {
  return model::predict(model().data, shape, placement, aware);
}

Transfer Selector::choose(const ObjectShape& shape, Placement placement, bool aware,
                          bool receive) {
  thread_local ThreadMemo memo;
  if (memo.owner != id_) {
    memo.choices.clear();
    memo.owner = id_;
  }
  const MemoKey key{shape, placement, aware, receive};
  if (auto it = memo.choices.find(key); it != memo.choices.end()) return it->second;
  const Transfer choice = model::choose(predict(shape, placement, aware), receive);
  if (memo.choices.size() >= kMemoLimit) memo.choices.clear();
  memo.choices.emplace(key, choice);
  return choice;
}

}  // namespace strider::model
