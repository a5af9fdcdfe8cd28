#include "model/selector.hpp"

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
    auto mix = [&h](std::uint64_t v) {
      h = (h ^ v) * 0xff51afd7ed558ccdull;
      h ^= h >> 32;
    };
    mix(static_cast<std::uint64_t>(k.shape.bytes));
    mix(static_cast<std::uint64_t>(k.shape.block));
    mix(static_cast<std::uint64_t>(k.shape.stride));
    mix(static_cast<std::uint64_t>(k.shape.dims) | (std::uint64_t{k.shape.irregular} << 8) |
        (static_cast<std::uint64_t>(k.placement) << 9) | (std::uint64_t{k.aware} << 10) |
        (std::uint64_t{k.receive} << 11));
    return static_cast<std::size_t>(h);
  }
};

// A thread's memo: a 4-way set-associative table of plain values. Trivially destructible on
// purpose: an application may send from a static destructor after its thread-locals are gone,
// and a fixed table needs no allocation and no bound on growth. 4 ways keep a few hundred
// shapes in use from evicting each other.
struct MemoSlot {
  std::uint64_t owner;  // the Selector's id; 0: empty
  MemoKey key;
  Method choice;
  // offer_wins against each method, alone [0] and in a burst [1]: -1 not asked yet
  std::int8_t offer[2][kModelledMethods];
};
constexpr std::size_t kMemoWays = 4;
constexpr std::size_t kMemoSets = 256;  // a power of two
struct MemoSet {
  MemoSlot ways[kMemoWays];
  std::uint32_t next_victim;
};
thread_local MemoSet t_memo[kMemoSets];

std::atomic<std::uint64_t> g_next_id{1};

// This thread's memo entry for `key` of the selector `owner`, made with `choose()` if there is
// none.
template <class Choose>
MemoSlot& memo(std::uint64_t owner, const MemoKey& key, Choose choose) {
  MemoSet& set = t_memo[MemoHash{}(key) & (kMemoSets - 1)];
  for (MemoSlot& slot : set.ways) {
    if (slot.owner == owner && slot.key == key) return slot;
  }
  MemoSlot& slot = set.ways[set.next_victim];  // round robin within the set
  set.next_victim = (set.next_victim + 1) % kMemoWays;
  static_assert(kModelledMethods == 3, "one -1 per method below");
  slot = {owner, key, choose(), {{-1, -1, -1}, {-1, -1, -1}}};
  return slot;
}

}  // namespace

LoadedModel load_model(const std::string& path, const std::optional<MachineIdentity>& here) {
  if (path.empty()) return defaults_because("no perf file path (neither HOME nor XDG_CACHE_HOME)");
  std::string text;
  if (!read_text_file(path, text)) {
    return defaults_because("no perf file at " + path + " (run strider-measure)");
  }
  LoadedModel loaded;
  std::string error;
  if (!from_json_text(text, loaded.data, error)) {
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

Method Selector::choose(const ObjectShape& shape, Placement placement, bool aware, bool receive) {
  return memo(id_, {shape, placement, aware, receive},
              [&] { return model::choose(predict(shape, placement, aware), receive); })
      .choice;
}

bool Selector::offer_wins(const ObjectShape& shape, bool aware, bool receive, Method method,
                          bool burst) {
  const int m = static_cast<int>(method);
  if (m < 0 || m >= kModelledMethods)
    return model::offer_wins(model().data, shape, aware, receive, method, burst);
  const Placement same = Placement::SameNode;
  MemoSlot& slot = memo(id_, {shape, same, aware, receive},
                        [&] { return model::choose(predict(shape, same, aware), receive); });
  std::int8_t& memo_offer = slot.offer[burst ? 1 : 0][m];
  if (memo_offer < 0) {
    memo_offer = model::offer_wins(model().data, shape, aware, receive, method, burst) ? 1 : 0;
  }
  return memo_offer == 1;
}

}  // namespace strider::model
