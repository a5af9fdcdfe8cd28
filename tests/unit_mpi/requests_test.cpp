// The progress engine's table of operations (transfer/requests.hpp): which operation a completion
// call claims where the MPI handed a freed handle out again before the call claimed its own.
#include "transfer/requests.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

namespace strider::transfer {
namespace {

// An operation that knows which one it is.
class Named final : public Operation {
 public:
  explicit Named(int name) : name(name) {}
  int complete(MPI_Status&, int) override { return MPI_SUCCESS; }
  const int name;
};

int name_of(const OperationPtr& op) { return op ? static_cast<const Named&>(*op).name : -1; }

// Distinct handle values (never given to the MPI: the table only keys on them), nonzero, so
// that none is MPI_REQUEST_NULL on either MPI family.
struct Handle {
  MPI_Request request;
  Handle() {
    static std::uintptr_t made = 0;
    const std::uintptr_t value = ++made * 64;
    std::memset(&request, 0, sizeof request);
    std::memcpy(&request, &value, std::min(sizeof request, sizeof value));
  }
};

TEST(Requests, ALateClaimTakesTheOperationTrackedBeforeItsCallBegan) {
  Requests table;
  const Handle h;
  table.track(h.request, std::make_unique<Named>(1));
  const std::uint64_t began = table.tracked_so_far();
  // The MPI freed the handle in this call and another thread's new request got it.
  table.track(h.request, std::make_unique<Named>(2));
  EXPECT_EQ(name_of(table.take(h.request, began)), 1);
  EXPECT_EQ(name_of(table.take(h.request, began)), -1);  // 2 was tracked after the call began
  EXPECT_EQ(name_of(table.take(h.request)), 2);
  EXPECT_TRUE(table.empty());
}

TEST(Requests, ALiveHandleIsTheNewestOperation) {
  Requests table;
  const Handle h;
  table.track(h.request, std::make_unique<Named>(1));  // awaiting a late claim
  table.track(h.request, std::make_unique<Named>(2));  // the live request's
  // Its own completion call (claiming before the MPI) and a cancel see the live one.
  EXPECT_EQ(table.cancel_verdict(h.request), Requests::CancelVerdict::Forward);
  OperationPtr live = table.take(h.request);
  EXPECT_EQ(name_of(live), 2);
  // Not complete: put back, and still told apart from the older one.
  table.put_back(h.request, std::move(live));
  EXPECT_EQ(name_of(table.take(h.request)), 2);
  EXPECT_EQ(name_of(table.take(h.request)), 1);
}

// Random interleavings of tracks, claims before and after, and put-backs, against a model that
// keeps each handle's operations with the count at which each was tracked.
TEST(Requests, RandomClaimsMatchAModel) {
  std::mt19937 rng(20261128);
  std::vector<Handle> handles(3);
  for (int round = 0; round < 200; ++round) {
    Requests table;
    struct Entry {
      std::uint64_t as;
      int name;
    };
    std::vector<std::vector<Entry>> model(handles.size());
    std::uint64_t count = 0;
    int next_name = 0;
    for (int step = 0; step < 40; ++step) {
      const std::size_t h = rng() % handles.size();
      std::vector<Entry>& m = model[h];
      switch (rng() % 3) {
        case 0:
          table.track(handles[h].request, std::make_unique<Named>(next_name));
          m.push_back({count++, next_name++});
          break;
        case 1: {  // a claim for a call that began `back` tracks ago
          const std::uint64_t before = count - std::min<std::uint64_t>(count, rng() % 3);
          int expected = -1;
          auto chosen = m.end();
          for (auto it = m.begin(); it != m.end(); ++it) {
            if (it->as < before) chosen = it;
          }
          if (chosen != m.end()) {
            expected = chosen->name;
            const Entry taken = *chosen;
            m.erase(chosen);
            OperationPtr op = table.take(handles[h].request, before);
            ASSERT_EQ(name_of(op), expected);
            if (rng() % 2) {  // not complete: put back
              table.put_back(handles[h].request, std::move(op));
              m.insert(
                  std::find_if(m.begin(), m.end(), [&](const Entry& e) { return e.as > taken.as; }),
                  taken);
            }
          } else {
            ASSERT_EQ(name_of(table.take(handles[h].request, before)), -1);
          }
          break;
        }
        default:
          if (!m.empty()) {
            ASSERT_EQ(table.cancel_verdict(handles[h].request), Requests::CancelVerdict::Forward);
          } else {
            ASSERT_EQ(table.cancel_verdict(handles[h].request), Requests::CancelVerdict::Untracked);
          }
      }
    }
    std::size_t left = 0;
    for (const auto& m : model) left += m.size();
    ASSERT_EQ(table.size(), left);
  }
}

}  // namespace
}  // namespace strider::transfer
