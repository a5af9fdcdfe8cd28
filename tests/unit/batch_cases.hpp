// Random batches for the batch tests (unit: the host emulation; gpu: the kernel, the same cases):
// copies of mixed kinds (pack, unpack, layout to layout), forms (strided and block lists, from
// random IR trees and from aligned ones, so every word size appears) and base alignments, with
// the destination bytes the host engine gives (pack, then unpack).
#pragma once

#include <algorithm>
#include <cstring>
#include <deque>
#include <memory>
#include <numeric>
#include <random>
#include <tuple>
#include <vector>

#include "canon/canonicalize.hpp"
#include "engine/cpu/pack.hpp"
#include "engine/cuda/batch_plan.hpp"
#include "ir/node.hpp"
#include "ir/typemap.hpp"
#include "random_tree.hpp"

namespace strider::testing {

// Bytes at a 64-byte aligned address, so a case's alignments are the same in every copy of it.
class Arena {
 public:
  explicit Arena(std::size_t bytes) : raw_(bytes + 64) {}
  std::byte* data() {
    return raw_.data() + (64 - reinterpret_cast<std::uintptr_t>(raw_.data()) % 64) % 64;
  }
  std::size_t size() const { return raw_.size() - 64; }

 private:
  std::vector<std::byte> raw_;
};

struct CaseSide {
  const canon::CanonicalForm* form = nullptr;  // null: contiguous bytes
  const engine::cuda::TypeState* state = nullptr;
  std::int64_t extent = 0;
  std::int64_t count = 0;  // elements, or bytes when contiguous
  std::int64_t at = 0;     // the origin's (or first byte's) offset in its arena
  std::int64_t bytes() const { return form ? count * form->size : count; }
};
struct CaseCopy {
  CaseSide from, to;
};

// Bounds of the bytes `count` elements of `form` touch, relative to the origin.
inline std::pair<std::int64_t, std::int64_t> touched_region(const canon::CanonicalForm& form,
                                                            std::int64_t extent,
                                                            std::int64_t count) {
  std::int64_t lo = 0, hi = 0;
  for (const auto& sb : form.pieces) {
    std::int64_t a = sb.offset, b = sb.offset + sb.block;
    for (const auto& d : sb.dims) {
      const std::int64_t reach = (d.count - 1) * d.stride;
      (reach < 0 ? a : b) += reach;
    }
    lo = std::min(lo, a);
    hi = std::max(hi, b);
  }
  for (const auto& d : form.repeat) {
    const std::int64_t reach = (d.count - 1) * d.stride;
    (reach < 0 ? lo : hi) += reach;
  }
  const std::int64_t last = (count - 1) * extent;
  return {lo + std::min<std::int64_t>(0, last), hi + std::max<std::int64_t>(0, last)};
}

// Whether the layout touches a byte twice (unpacking into it is erroneous in MPI): the packed
// stream's byte offsets, through four byte planes of a tagged buffer.
inline bool touches_twice(const canon::CanonicalForm& form, std::int64_t extent,
                          std::int64_t count) {
  const auto [lo, hi] = touched_region(form, extent, count);
  const auto span = static_cast<std::size_t>(hi - lo);
  const auto bytes = static_cast<std::size_t>(form.size * count);
  std::vector<std::uint32_t> offsets(bytes, 0);
  std::vector<std::byte> buffer(span), packed(bytes);
  for (int plane = 0; plane < 4; ++plane) {
    for (std::size_t i = 0; i < span; ++i) buffer[i] = static_cast<std::byte>(i >> (8 * plane));
    engine::cpu::pack(form, extent, count, buffer.data() - lo, packed.data());
    for (std::size_t k = 0; k < bytes; ++k) {
      offsets[k] |= static_cast<std::uint32_t>(packed[k]) << (8 * plane);
    }
  }
  std::sort(offsets.begin(), offsets.end());
  return std::adjacent_find(offsets.begin(), offsets.end()) != offsets.end();
}

// A tree whose offsets, blocks and strides are multiples of `unit` (so large words appear in
// block lists too): a few dense pieces, maybe repeated.
inline ir::Node aligned_tree(std::mt19937_64& rng, std::int64_t unit) {
  std::vector<ir::Node> items;
  std::int64_t at = unit * pick(rng, 0, 2);
  for (std::int64_t i = 0, n = pick(rng, 1, 4); i < n; ++i) {
    const std::int64_t bytes = unit * pick(rng, 1, 6);
    items.push_back(ir::Node::dense(at, bytes));
    at += bytes + unit * pick(rng, 0, 3);
  }
  ir::Node node = ir::Node::list(std::move(items));
  if (pick(rng, 0, 1)) {
    node = ir::Node::stream(0, pick(rng, 1, 4), at + unit * pick(rng, 0, 2), std::move(node));
  }
  return node;
}

class BatchCase {
 public:
  enum class Mix { Any, Pack, Unpack, Self };

  // `copies` random copies of the kinds `mix` allows.
  BatchCase(std::mt19937_64& rng, int copies, Mix mix) {
    for (int i = 0; i < copies; ++i) add(rng, mix);
    source_ = std::make_unique<Arena>(static_cast<std::size_t>(source_end_ + 64));
    dest_ = std::make_unique<Arena>(static_cast<std::size_t>(dest_end_ + 64));
    for (std::size_t i = 0; i < source_->size(); ++i) source_->data()[i] = std::byte(rng());
    for (std::size_t i = 0; i < dest_->size(); ++i) dest_->data()[i] = std::byte(rng());
    before_.assign(dest_->data(), dest_->data() + dest_->size());
    expected_ = before_;
    for (const CaseCopy& c : copies_) {
      std::vector<std::byte> packed(static_cast<std::size_t>(c.from.bytes()));
      const std::byte* from = source_->data() + c.from.at;
      if (c.from.form) {
        engine::cpu::pack(*c.from.form, c.from.extent, c.from.count, from, packed.data());
      } else {
        std::memcpy(packed.data(), from, packed.size());
      }
      std::byte* to = expected_.data() + c.to.at;
      if (c.to.form) {
        engine::cpu::unpack(*c.to.form, c.to.extent, c.to.count, packed.data(), to);
      } else {
        std::memcpy(to, packed.data(), packed.size());
      }
    }
  }

  const std::vector<CaseCopy>& copies() const { return copies_; }
  // The arenas (host memory, 64-byte aligned): the sources, the destinations before the copies,
  // and the destinations the copies must leave.
  Arena& source() { return *source_; }
  Arena& dest() { return *dest_; }
  const std::vector<std::byte>& expected() const { return expected_; }
  const std::vector<std::byte>& dest_before() const { return before_; }

  // The copies for arenas at `source` and `dest` (64-byte aligned, as the host ones).
  std::vector<engine::cuda::BatchCopy> bind(std::byte* source, std::byte* dest) const {
    std::vector<engine::cuda::BatchCopy> out;
    const auto side = [](const CaseSide& s, std::byte* arena) {
      return engine::cuda::BatchSide{s.form, s.extent, s.state, s.count, arena + s.at};
    };
    for (const CaseCopy& c : copies_) out.push_back({side(c.from, source), side(c.to, dest)});
    return out;
  }

 private:
  struct Form {
    const canon::CanonicalForm* form;
    const engine::cuda::TypeState* state;
  };

  Form random_form(std::mt19937_64& rng) {
    for (;;) {
      const ir::Node tree = pick(rng, 0, 2) == 0
                                ? aligned_tree(rng, std::int64_t{1} << pick(rng, 0, 4))
                                : random_tree(rng, static_cast<int>(pick(rng, 1, 5)));
      auto form = canon::canonical_form(tree);
      if (!form || form->size == 0 || form->size > 4096) continue;
      forms_.push_back(std::move(*form));
      states_.emplace_back();
      return {&forms_.back(), &states_.back()};
    }
  }

  // An extent at least the element's span half the time (else elements interleave).
  static std::int64_t random_extent(std::mt19937_64& rng, const canon::CanonicalForm& form) {
    const auto [lo, hi] = touched_region(form, 0, 1);
    const std::int64_t unit = std::int64_t{1} << pick(rng, 0, 4);
    const std::int64_t span = (std::max<std::int64_t>(1, hi - lo) + unit - 1) / unit * unit;
    return pick(rng, 0, 1) ? span + unit * pick(rng, 0, 3)
                           : std::max<std::int64_t>(1, span - pick(rng, 0, 4));
  }

  // Places a side in an arena ending at `end`: 16-byte aligned, or misaligned by a few bytes.
  static void place(std::mt19937_64& rng, CaseSide& side, std::int64_t& end) {
    const std::int64_t shift = pick(rng, 0, 2) == 0 ? pick(rng, 1, 15) : 0;
    std::int64_t lo = 0, hi = side.count;
    if (side.form) std::tie(lo, hi) = touched_region(*side.form, side.extent, side.count);
    const std::int64_t start = (end + 15) / 16 * 16 + 16 * pick(rng, 0, 2);
    side.at = start + shift - lo;
    end = side.at + hi;
  }

  CaseSide layout_side(std::mt19937_64& rng, bool destination, std::int64_t count = 0) {
    for (int attempt = 0;; ++attempt) {
      const Form f = random_form(rng);
      CaseSide side{f.form, f.state, random_extent(rng, *f.form), count ? count : pick(rng, 1, 3),
                    0};
      if (destination && touches_twice(*side.form, side.extent, side.count)) continue;
      return side;
    }
  }

  void add(std::mt19937_64& rng, Mix mix) {
    const Mix kind = mix != Mix::Any ? mix : static_cast<Mix>(pick(rng, 1, 3));
    CaseCopy c;
    if (kind == Mix::Pack) {
      c.from = layout_side(rng, false);
      c.to = CaseSide{nullptr, nullptr, 0, c.from.bytes(), 0};
    } else if (kind == Mix::Unpack) {
      c.to = layout_side(rng, true);
      c.from = CaseSide{nullptr, nullptr, 0, c.to.bytes(), 0};
    } else {
      // Two forms, counts that give both the same packed bytes (small enough to check).
      for (;;) {
        c.from = layout_side(rng, false, 1);
        c.to = layout_side(rng, true, 1);
        const std::int64_t g = std::gcd(c.from.form->size, c.to.form->size);
        c.from.count = c.to.form->size / g;
        c.to.count = c.from.form->size / g;
        if (c.from.bytes() <= (1 << 15) && !touches_twice(*c.to.form, c.to.extent, c.to.count)) {
          break;
        }
      }
    }
    place(rng, c.from, source_end_);
    place(rng, c.to, dest_end_);
    copies_.push_back(c);
  }

  std::deque<canon::CanonicalForm> forms_;
  std::deque<engine::cuda::TypeState> states_;
  std::vector<CaseCopy> copies_;
  std::int64_t source_end_ = 0, dest_end_ = 0;
  std::unique_ptr<Arena> source_, dest_;
  std::vector<std::byte> before_, expected_;
};

}  // namespace strider::testing
