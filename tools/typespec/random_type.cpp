#include "typespec/random_type.hpp"

#include <algorithm>
#include <cstddef>
#include <span>
#include <utility>

namespace strider::typespec {
namespace {

constexpr int64_t kIntMax = std::numeric_limits<int>::max();
constexpr int64_t kIntMin = std::numeric_limits<int>::min();
constexpr int64_t kAddrLimit = int64_t{1} << 40;  // keeps model arithmetic far from overflow

// ---- named types ----

struct NamedLayout {
  std::string_view name;
  int64_t size;
  int64_t extent;
  std::vector<Run> runs;
  int marker = 0;
};

template <class T>
NamedLayout basic(std::string_view name) {
  return {name, sizeof(T), sizeof(T), {{0, sizeof(T)}}};
}

// Alignment used for extent padding checks: deliberately generous (the element size or the
// pair's extent, capped at 16) so the check stays conservative whatever alignment an MPI uses.
int64_t pad_align(const NamedLayout& n) { return std::clamp<int64_t>(n.extent, 1, 16); }

// MPI's pair types have the layout of the matching C struct (gaps included, e.g. short_int).
template <class A, class B>
NamedLayout pair(std::string_view name) {
  struct P {
    A a;
    B b;
  };
  std::vector<Run> runs = {{offsetof(P, a), sizeof(A)}, {offsetof(P, b), sizeof(B)}};
  if (runs[0].offset + runs[0].length == runs[1].offset) runs = {{0, sizeof(A) + sizeof(B)}};
  return {name, sizeof(A) + sizeof(B), sizeof(P), runs};
}

const std::vector<NamedLayout>& named_layouts() {
  static const std::vector<NamedLayout> table = [] {
    std::vector<NamedLayout> t = {
        basic<char>("byte"),
        basic<char>("char"),
        basic<signed char>("signed_char"),
        basic<unsigned char>("unsigned_char"),
        basic<short>("short"),
        basic<unsigned short>("unsigned_short"),
        basic<int>("int"),
        basic<unsigned>("unsigned"),
        basic<long>("long"),
        basic<unsigned long>("unsigned_long"),
        basic<long long>("long_long"),
        basic<unsigned long long>("unsigned_long_long"),
        basic<float>("float"),
        basic<double>("double"),
        basic<long double>("long_double"),
        basic<wchar_t>("wchar"),
        basic<bool>("c_bool"),
        basic<int8_t>("int8_t"),
        basic<int16_t>("int16_t"),
        basic<int32_t>("int32_t"),
        basic<int64_t>("int64_t"),
        basic<uint8_t>("uint8_t"),
        basic<uint16_t>("uint16_t"),
        basic<uint32_t>("uint32_t"),
        basic<uint64_t>("uint64_t"),
        basic<MPI_Aint>("aint"),
        basic<MPI_Offset>("offset"),
        basic<MPI_Count>("count"),
        basic<char>("packed"),
        pair<float, int>("float_int"),
        pair<double, int>("double_int"),
        pair<long, int>("long_int"),
        pair<short, int>("short_int"),
        pair<int, int>("2int"),
        pair<long double, int>("long_double_int"),
        {"c_float_complex", 2 * sizeof(float), 2 * sizeof(float), {{0, 2 * sizeof(float)}}},
        {"c_double_complex", 2 * sizeof(double), 2 * sizeof(double), {{0, 2 * sizeof(double)}}},
    };
    t.push_back({"lb", 0, 0, {}, 1});
    t.push_back({"ub", 0, 0, {}, 2});
    return t;
  }();
  return table;
}

// ---- layout model ----

void append_run(std::vector<Run>& runs, int64_t offset, int64_t length) {
  if (!runs.empty() && runs.back().offset + runs.back().length == offset) {
    runs.back().length += length;
  } else {
    runs.push_back({offset, length});
  }
}

void append_shifted(std::vector<Run>& runs, const std::vector<Run>& child, int64_t shift) {
  for (const Run& r : child) append_run(runs, r.offset + shift, r.length);
}

// Folds the bounds of blocks into a type's bounds under one reading: sticky (marker)
// contributions win over ordinary ones; with none at all the bounds are 0.
struct BoundsFold {
  int64_t lo = INT64_MAX, hi = INT64_MIN, slo = INT64_MAX, shi = INT64_MIN;
  void add_lb(int64_t v, bool sticky) { (sticky ? slo : lo) = std::min(sticky ? slo : lo, v); }
  void add_ub(int64_t v, bool sticky) { (sticky ? shi : hi) = std::max(sticky ? shi : hi, v); }
  Bounds result(bool propagate) const {
    Bounds b;
    b.sticky_lb = slo != INT64_MAX;
    b.sticky_ub = shi != INT64_MIN;
    b.lb = b.sticky_lb ? slo : (lo != INT64_MAX ? lo : 0);
    b.ub = b.sticky_ub ? shi : (hi != INT64_MIN ? hi : 0);
    if (!propagate) b.sticky_lb = b.sticky_ub = false;
    return b;
  }
};

struct Block {
  int64_t disp;   // bytes
  int64_t count;  // consecutive copies of the child
  const Layout* child;
};

void finish_true_bounds(Layout& l) {
  if (l.runs.empty()) return;
  l.true_lb = INT64_MAX;
  l.true_ub = INT64_MIN;
  for (const Run& r : l.runs) {
    l.true_lb = std::min(l.true_lb, r.offset);
    l.true_ub = std::max(l.true_ub, r.offset + r.length);
  }
}

// Layout of a list of blocks (contiguous, vector, indexed, struct ...).
std::optional<Layout> from_blocks(const std::vector<Block>& blocks, int64_t max_size) {
  Layout l;
  for (const Block& b : blocks) {
    l.size += b.count * b.child->size;
    if (l.size > max_size) return std::nullopt;
  }
  BoundsFold sticky, plain;
  for (const Block& b : blocks) {
    const Layout& c = *b.child;
    if (b.count == 0) continue;  // both MPIs ignore empty blocks in (h)indexed and struct
    if (!c.portable || !c.bounds_portable) l.portable = false;
    if (c.size == 0 && c.marker == 0) l.portable = false;  // Open MPI: odd true bounds
    l.align = std::max(l.align, c.align);
    const int64_t e = c.extent();
    auto fold = [&](BoundsFold& f, const Bounds& cb, bool direct_lb, bool direct_ub) {
      int64_t ce = cb.ub - cb.lb;
      int64_t lo = b.disp + cb.lb + std::min<int64_t>(0, (b.count - 1) * ce);
      int64_t hi = b.disp + cb.ub + std::max<int64_t>(0, (b.count - 1) * ce);
      if (c.marker != 2) f.add_lb(lo, direct_lb);
      if (c.marker != 1) f.add_ub(hi, direct_ub);
    };
    fold(sticky, c.sticky, c.sticky.sticky_lb, c.sticky.sticky_ub);
    fold(plain, c.plain, c.marker == 1, c.marker == 2);
    for (int64_t k = 0; k < b.count && c.size > 0; ++k)
      append_shifted(l.runs, c.runs, b.disp + k * e);
  }
  l.sticky = sticky.result(true);
  l.plain = plain.result(false);
  finish_true_bounds(l);
  // Open MPI pads the extent to the alignment after adding each block unless bounds are
  // sticky (MPICH pads structs only, at the end). Padding can't happen if every block's bounds
  // are aligned, or if every block's bounds are sticky.
  l.aligned = true;
  for (const Block& b : blocks) {
    const Layout& c = *b.child;
    if (b.count == 0 || c.marker || (c.sticky.sticky_lb && c.sticky.sticky_ub)) continue;
    for (const Bounds* cb : {&c.sticky, &c.plain}) {
      int64_t ce = cb->ub - cb->lb;
      int64_t lo = b.disp + cb->lb + std::min<int64_t>(0, (b.count - 1) * ce);
      int64_t hi = b.disp + cb->ub + std::max<int64_t>(0, (b.count - 1) * ce);
      if (lo % l.align != 0 || hi % l.align != 0) l.aligned = false;
    }
  }
  return l;
}

bool in_int(int64_t v) { return v >= kIntMin && v <= kIntMax; }
bool in_addr(int64_t v) { return v > -kAddrLimit && v < kAddrLimit; }

// Typemap order of the elements of a subarray/darray: per-dimension index lists, iterated
// with the last (C) or first (Fortran) dimension fastest; element offsets use the global
// array's row-/column-major linear index times the child extent.
std::optional<Layout> from_grid(const std::vector<std::vector<int64_t>>& idx,
                                const std::vector<int64_t>& dims, bool fortran, const Layout& c,
                                int64_t max_size) {
  int64_t n = 1, total = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    n *= static_cast<int64_t>(idx[i].size());
    total *= dims[i];
    if (total > kAddrLimit) return std::nullopt;
  }
  Layout l;
  l.size = n * c.size;
  if (l.size > max_size) return std::nullopt;
  l.portable = c.portable && c.bounds_portable && c.size > 0 && c.marker == 0;
  int64_t e = c.extent();
  if (e < 0 || total * std::max<int64_t>(e, 1) > kAddrLimit) return std::nullopt;
  const size_t nd = dims.size();
  std::vector<size_t> pos(nd, 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t linear = 0;
    for (size_t j = 0; j < nd; ++j) {
      size_t d = fortran ? nd - 1 - j : j;  // most significant dimension first
      linear = linear * dims[d] + idx[d][pos[d]];
    }
    append_shifted(l.runs, c.runs, linear * e);
    for (size_t j = 0; j < nd; ++j) {  // odometer increment, fastest dimension first
      size_t d = fortran ? j : nd - 1 - j;
      if (++pos[d] < idx[d].size()) break;
      pos[d] = 0;
    }
  }
  l.align = c.align;
  l.plain = {0, total * e, false, false};
  l.sticky = {0, total * e, true, true};
  finish_true_bounds(l);
  return l;
}

std::optional<Layout> subarray_layout(const Spec& s, const Layout& c, int64_t max_size) {
  const auto& sizes = s.lists[0];
  const auto& subs = s.lists[1];
  const auto& starts = s.lists[2];
  if (sizes.empty() || subs.size() != sizes.size() || starts.size() != sizes.size()) {
    return std::nullopt;
  }
  std::vector<std::vector<int64_t>> idx(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    // Open MPI rejects subsize 0 (MPICH accepts it).
    if (sizes[i] < 1 || subs[i] < 1 || starts[i] < 0 || subs[i] > sizes[i] ||
        starts[i] > sizes[i] - subs[i] || sizes[i] > kIntMax) {
      return std::nullopt;
    }
    for (int64_t k = 0; k < subs[i]; ++k) idx[i].push_back(starts[i] + k);
  }
  return from_grid(idx, sizes, s.params[0] == kOrderFortran, c, max_size);
}

std::optional<Layout> darray_layout(const Spec& s, const Layout& c, int64_t max_size) {
  const int64_t nprocs = s.params[0], rank = s.params[1];
  const auto& gsizes = s.lists[0];
  const auto& distribs = s.lists[1];
  const auto& dargs = s.lists[2];
  const auto& psizes = s.lists[3];
  const size_t nd = gsizes.size();
  if (nd == 0 || distribs.size() != nd || dargs.size() != nd || psizes.size() != nd) {
    return std::nullopt;
  }
  if (nprocs < 1 || nprocs > kIntMax || rank < 0 || rank >= nprocs) return std::nullopt;
  int64_t prod = 1;
  for (int64_t p : psizes) {
    if (p < 1 || p > nprocs) return std::nullopt;
    prod *= p;
    if (prod > nprocs) return std::nullopt;
  }
  if (prod != nprocs) return std::nullopt;
  // Process grid coordinates are row-major whatever the array order.
  std::vector<int64_t> coord(nd);
  for (size_t i = nd, r = static_cast<size_t>(rank); i-- > 0;) {
    coord[i] = static_cast<int64_t>(r % psizes[i]);
    r /= psizes[i];
  }
  std::vector<std::vector<int64_t>> idx(nd);
  bool mpich_true_bounds_bug = false;
  for (size_t i = 0; i < nd; ++i) {
    const int64_t g = gsizes[i], p = psizes[i], darg = dargs[i];
    if (g < 1 || g > kIntMax) return std::nullopt;
    if (darg != kDefaultDarg && (darg < 1 || darg > kIntMax)) return std::nullopt;
    switch (distribs[i]) {
      case kDistribNone:
        if (p != 1) return std::nullopt;
        for (int64_t k = 0; k < g; ++k) idx[i].push_back(k);
        break;
      case kDistribBlock: {
        int64_t b = darg == kDefaultDarg ? (g + p - 1) / p : darg;
        if (b * p < g) return std::nullopt;
        for (int64_t k = coord[i] * b; k < std::min(g, (coord[i] + 1) * b); ++k) {
          idx[i].push_back(k);
        }
        break;
      }
      case kDistribCyclic: {
        int64_t b = darg == kDefaultDarg ? 1 : darg;
        for (int64_t k = coord[i] * b; k < g; k += b * p) {
          for (int64_t j = k; j < std::min(g, k + b); ++j) idx[i].push_back(j);
        }
        // MPICH 4.0 gets the true bounds wrong when the only local block is partial.
        int64_t n = static_cast<int64_t>(idx[i].size());
        if (n > 0 && n < b) mpich_true_bounds_bug = true;
        break;
      }
      default:
        return std::nullopt;
    }
  }
  auto l = from_grid(idx, gsizes, s.params[2] == kOrderFortran, c, max_size);
  // Open MPI: garbage true extent for an empty local part.
  if (l && (l->size == 0 || mpich_true_bounds_bug)) l->portable = false;
  return l;
}

// Layout of `s` given its children's layouts.
std::optional<Layout> combine(const Spec& s, std::span<const Layout> kids, int64_t max_size) {
  auto shape = [&](size_t np, size_t nl, size_t nc) {
    return s.params.size() == np && s.lists.size() == nl && kids.size() == nc;
  };
  for (int64_t p : s.params) {
    if (!in_addr(p)) return std::nullopt;
  }
  for (const auto& list : s.lists) {
    for (int64_t v : list) {
      if (v != kDefaultDarg && !in_addr(v)) return std::nullopt;
    }
  }
  std::vector<Block> blocks;
  // Vector-like constructors: MPICH gives blocklength-0 blocks an extent, Open MPI does not.
  bool zero_block_quirk = false;
  bool minus_one_quirk = false;
  switch (s.kind) {
    case Kind::kNamed: {
      for (const auto& n : named_layouts()) {
        if (n.name != s.name) continue;
        Layout l;
        l.size = n.size;
        l.runs = n.runs;
        l.marker = n.marker;
        l.align = pad_align(n);
        l.plain = {0, n.extent, false, false};
        l.sticky = {0, n.extent, n.marker == 1, n.marker == 2};
        finish_true_bounds(l);
        return l;
      }
      return std::nullopt;
    }
    case Kind::kContiguous:
      if (!shape(1, 0, 1) || s.params[0] < 0 || !in_int(s.params[0])) return std::nullopt;
      blocks.push_back({0, s.params[0], &kids[0]});
      break;
    case Kind::kVector:
    case Kind::kHvector: {
      if (!shape(3, 0, 1)) return std::nullopt;
      const int64_t count = s.params[0], bl = s.params[1], stride = s.params[2];
      if (count < 0 || bl < 0 || !in_int(count) || !in_int(bl)) return std::nullopt;
      if (s.kind == Kind::kVector && !in_int(stride)) return std::nullopt;
      if (count * std::max<int64_t>(1, bl) > max_size + 1) return std::nullopt;
      int64_t step = s.kind == Kind::kVector ? stride * kids[0].extent() : stride;
      for (int64_t i = 0; i < count; ++i) blocks.push_back({i * step, bl, &kids[0]});
      zero_block_quirk = bl == 0 && count > 0;
      // Open MPI 4.1 reads a byte stride of -1 as "use the child's extent" (+extent).
      minus_one_quirk = step == -1 && count > 1;
      break;
    }
    case Kind::kIndexed:
    case Kind::kHindexed: {
      if (!shape(0, 2, 1) || s.lists[0].size() != s.lists[1].size()) return std::nullopt;
      int64_t unit = s.kind == Kind::kIndexed ? kids[0].extent() : 1;
      for (size_t i = 0; i < s.lists[0].size(); ++i) {
        int64_t bl = s.lists[0][i], d = s.lists[1][i];
        if (bl < 0 || !in_int(bl) || (s.kind == Kind::kIndexed && !in_int(d))) {
          return std::nullopt;
        }
        blocks.push_back({d * unit, bl, &kids[0]});
      }
      break;
    }
    case Kind::kIndexedBlock:
    case Kind::kHindexedBlock: {
      if (!shape(1, 1, 1)) return std::nullopt;
      const int64_t bl = s.params[0];
      if (bl < 0 || !in_int(bl)) return std::nullopt;
      int64_t unit = s.kind == Kind::kIndexedBlock ? kids[0].extent() : 1;
      for (int64_t d : s.lists[0]) {
        if (s.kind == Kind::kIndexedBlock && !in_int(d)) return std::nullopt;
        blocks.push_back({d * unit, bl, &kids[0]});
      }
      zero_block_quirk = bl == 0 && !s.lists[0].empty();
      break;
    }
    case Kind::kStruct: {
      if (!shape(0, 2, s.lists[0].size()) || s.lists[1].size() != kids.size()) {
        return std::nullopt;
      }
      for (size_t i = 0; i < kids.size(); ++i) {
        if (s.lists[0][i] < 0 || !in_int(s.lists[0][i])) return std::nullopt;
        blocks.push_back({s.lists[1][i], s.lists[0][i], &kids[i]});
      }
      auto l = from_blocks(blocks, max_size);
      if (!l) return l;
      l->bounds_portable = l->portable && l->sticky.lb == l->plain.lb &&
                           l->sticky.ub == l->plain.ub && l->extent() >= 0;
      // Both MPIs pad a struct's extent to the alignment of its members unless an upper bound
      // marker is present; the alignment rules differ in corners, so only trust extents that
      // no alignment (<= 16) changes.
      bool has_ub_marker =
          std::any_of(kids.begin(), kids.end(), [](const Layout& k) { return k.marker == 2; });
      // (Open MPI has no markers, and MPICH doesn't pad with a UB marker.)
      if (!has_ub_marker && (!l->aligned || l->extent() % 16 != 0)) l->bounds_portable = false;
      return l;
    }
    case Kind::kSubarray: {
      if (!shape(1, 3, 1)) return std::nullopt;
      return subarray_layout(s, kids[0], max_size);
    }
    case Kind::kDarray: {
      if (!shape(3, 4, 1)) return std::nullopt;
      return darray_layout(s, kids[0], max_size);
    }
    case Kind::kResized: {
      if (!shape(2, 0, 1)) return std::nullopt;
      Layout l = kids[0];
      l.portable = kids[0].portable && kids[0].marker == 0;
      l.marker = 0;
      l.plain = {s.params[0], s.params[0] + s.params[1], false, false};
      l.sticky = {s.params[0], s.params[0] + s.params[1], true, true};
      l.bounds_portable = l.portable && s.params[1] >= 0;
      return l;
    }
    case Kind::kDup: {
      if (!shape(0, 0, 1)) return std::nullopt;
      Layout l = kids[0];
      if (l.marker) l.portable = l.bounds_portable = false;
      return l;
    }
  }
  auto l = from_blocks(blocks, max_size);
  if (!l) return l;
  for (const Block& b : blocks) {
    if (b.count > 0 && b.child->marker) l->portable = false;  // markers only in structs
  }
  if (minus_one_quirk) l->portable = false;
  l->bounds_portable = l->portable && !zero_block_quirk && l->sticky.lb == l->plain.lb &&
                       l->sticky.ub == l->plain.ub && l->extent() >= 0;
  if (!l->aligned) l->bounds_portable = false;
  return l;
}

std::optional<Layout> layout_rec(const Spec& s, int64_t max_size) {
  std::vector<Layout> kids;
  kids.reserve(s.children.size());
  for (const Spec& c : s.children) {
    auto k = layout_rec(c, max_size);
    if (!k) return k;
    kids.push_back(std::move(*k));
  }
  return combine(s, kids, max_size);
}

// ---- generator ----

int spec_depth(const Spec& s) {
  int d = 0;
  for (const Spec& c : s.children) d = std::max(d, spec_depth(c));
  return s.kind == Kind::kNamed ? 0 : d + 1;
}

struct Node {
  Spec spec;
  Layout layout;
};

Spec make(Kind kind, std::vector<int64_t> params = {}, std::vector<std::vector<int64_t>> lists = {},
          std::vector<Spec> children = {}) {
  Spec s;
  s.kind = kind;
  s.params = std::move(params);
  s.lists = std::move(lists);
  s.children = std::move(children);
  return s;
}

class Generator {
 public:
  Generator(std::mt19937_64& rng, const RandomTypeOptions& opts) : rng_(rng), o_(opts) {}

  Node top() {
    if (pct(1)) {
      if (auto n = empty_type()) return *n;
    }
    for (int attempt = 0; attempt < 16; ++attempt) {
      // Later attempts leave one level for the count-safe wrapper below.
      const int depth = std::max(1, attempt < 8 ? o_.max_depth : o_.max_depth - 1);
      Node n = gen(depth, /*leaf_ok=*/attempt > 0 || pct(10));
      if (top_ok(n.layout)) return n;
      if (spec_depth(n.spec) < o_.max_depth) {
        // Make it count-safe by giving it an extent that covers all its data.
        const Layout& l = n.layout;
        int64_t lo = std::min(l.lb(), l.true_lb);
        int64_t hi = std::max(l.lb() + l.extent(), l.true_ub);
        if (auto w = wrap(make(Kind::kResized, {lo, hi - lo}, {}, {n.spec}), {n.layout}, 0);
            w && top_ok(w->layout)) {
          return *w;
        }
      }
    }
    return leaf();
  }

 private:
  std::mt19937_64& rng_;
  const RandomTypeOptions& o_;

  // Inclusive range; modulo bias is irrelevant here and keeps results library-independent.
  int64_t uni(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng_() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool pct(int p) { return uni(0, 99) < p; }
  template <class T>
  void shuffle(std::vector<T>& v) {
    for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[uni(0, i - 1)]);
  }

  bool inner_ok(const Layout& l) const {
    const int64_t lim = o_.max_extent_bytes;
    return l.portable && l.bounds_portable && l.size > 0 && l.size <= o_.max_size_bytes &&
           l.extent() > 0 && l.extent() <= lim && l.true_extent() <= lim &&
           std::abs(l.lb()) <= lim && std::abs(l.true_lb) <= lim &&
           (o_.allow_overlap || !has_overlap(l));
  }

  bool top_ok(const Layout& l) const {
    return inner_ok(l) && (o_.allow_overlap || !o_.count_safe || is_count_safe(l));
  }

  // Checks a candidate; `depth` is its nesting budget, which may leave room for a resized.
  std::optional<Node> wrap(Spec spec, std::vector<Layout> kids, int depth) {
    auto l = combine(spec, kids, o_.max_size_bytes);
    if (!l) return std::nullopt;
    if (l->portable && !l->bounds_portable && l->extent() > 0 && spec_depth(spec) < depth &&
        pct(70)) {
      // Bounds differ between MPIs (padding, sticky rules): pin them with resized.
      int64_t ext = pct(50) ? l->extent() : (l->extent() + 15) / 16 * 16;
      spec = make(Kind::kResized, {l->lb(), ext}, {}, {std::move(spec)});
      Layout inner = std::move(*l);
      l = combine(spec, std::span<const Layout>(&inner, 1), o_.max_size_bytes);
    }
    if (!l || !inner_ok(*l)) return std::nullopt;
    return Node{std::move(spec), std::move(*l)};
  }

  Node leaf() {
    // Pair types (with gaps and padding) are over-weighted: they are the usual trouble.
    static constexpr std::string_view kPairs[] = {"float_int", "double_int", "long_int",
                                                  "short_int", "2int",       "long_double_int"};
    Spec s;
    if (pct(25)) {
      s.name = kPairs[uni(0, std::size(kPairs) - 1)];
    } else {
      const auto& t = named_layouts();
      do {
        s.name = t[uni(0, t.size() - 1)].name;
      } while (s.name == "lb" || s.name == "ub");
    }
    return Node{s, *layout_rec(s, o_.max_size_bytes)};
  }

  // Top-level zero-size types: count 0 or all blocklengths 0, where both MPIs agree.
  std::optional<Node> empty_type() {
    Node c = leaf();
    Spec s;
    switch (uni(0, 4)) {
      case 0:
        s = make(Kind::kContiguous, {0}, {}, {c.spec});
        break;
      case 1:
        s = make(Kind::kVector, {0, uni(1, 3), uni(1, 4)}, {}, {c.spec});
        break;
      case 2:
        s = make(Kind::kIndexed, {}, {{}, {}}, {c.spec});
        break;
      case 3:
        s = make(Kind::kHindexed, {}, {{0, 0}, {uni(0, 8), uni(0, 8)}}, {c.spec});
        break;
      default:
        s = make(Kind::kStruct, {}, {{}, {}}, {});
        break;
    }
    auto l = layout_of(s, o_.max_size_bytes);
    if (!l) return std::nullopt;
    return Node{std::move(s), std::move(*l)};
  }

  Node gen(int depth, bool leaf_ok = true) {
    if (depth <= 0) return leaf();
    for (int attempt = 0; attempt < 8; ++attempt) {
      if (auto n = candidate(depth, leaf_ok)) return std::move(*n);
    }
    return leaf();
  }

  // Weighted constructor choice, then parameters chosen to be valid most of the time; the
  // layout check (inner_ok) has the last word.
  std::optional<Node> candidate(int depth, bool leaf_ok) {
    enum Pick {
      kLeaf,
      kContig,
      kVec,
      kHvec,
      kIdx,
      kHidx,
      kIdxB,
      kHidxB,
      kStruct,
      kSub,
      kDarr,
      kResize,
      kDupe,
      kTranspose,
      kPicks
    };
    static constexpr int kWeights[kPicks] = {12, 8, 10, 10, 8, 8, 6, 6, 12, 8, 6, 10, 3, 4};
    int total = 0;
    for (int i = 0; i < kPicks; ++i) total += weight(static_cast<Pick>(i), leaf_ok, kWeights[i]);
    int64_t r = uni(0, total - 1);
    int pick = 0;
    while (r >= weight(static_cast<Pick>(pick), leaf_ok, kWeights[pick])) {
      r -= weight(static_cast<Pick>(pick), leaf_ok, kWeights[pick]);
      ++pick;
    }
    if (pick == kLeaf) return leaf();
    if (pick == kStruct) return struct_type(depth);
    if (pick == kTranspose) return transpose(depth);
    Node c = gen(depth - 1);
    const Layout& cl = c.layout;
    const int64_t e = cl.extent();
    auto one = [&](Kind k, std::vector<int64_t> p, std::vector<std::vector<int64_t>> l = {}) {
      return wrap(make(k, std::move(p), std::move(l), {c.spec}), {cl}, depth);
    };
    switch (pick) {
      case kContig:
        return one(Kind::kContiguous, {pct(20) ? uni(1, 16) : uni(1, 4)});
      case kVec:
      case kHvec: {
        int64_t count = uni(1, 5), bl = uni(1, 3), stride = 0;
        bool h = pick == kHvec;
        int64_t unit = h ? e : 1;
        switch (uni(0, 9)) {
          case 0:
          case 1:
          case 2:
          case 3:
          case 4:
            stride = bl * unit + (h ? uni(0, 8) : uni(0, 3));
            break;
          case 5:
          case 6:
            stride = -(bl * unit + (h ? uni(0, 8) : uni(0, 3)));
            break;
          case 7:
          case 8:  // interleave copies inside the child's holes
            bl = 1;
            stride = h ? uni(1, std::max<int64_t>(1, e - 1)) : 1;
            break;
          default:
            stride = uni(-2 * bl * unit, 2 * bl * unit);
            break;
        }
        if (!o_.allow_negative_strides) stride = std::abs(stride);
        return one(h ? Kind::kHvector : Kind::kVector, {count, bl, stride});
      }
      case kIdx:
      case kHidx:
      case kIdxB:
      case kHidxB: {
        bool h = pick == kHidx || pick == kHidxB;
        bool fixed = pick == kIdxB || pick == kHidxB;
        int64_t n = uni(1, 4), common = uni(1, 3), cursor = 0;
        std::vector<int64_t> bls, disps;
        for (int64_t i = 0; i < n; ++i) {
          int64_t bl = fixed ? common : (pct(6) ? 0 : uni(1, 3));
          bls.push_back(bl);
          disps.push_back(cursor);
          int64_t gap = pct(15) ? -uni(0, bl) : uni(0, 2);  // occasionally interleave
          cursor += h ? bl * e + gap * std::max<int64_t>(1, e / 2) + uni(0, 3) : bl + gap;
        }
        if (pct(40)) {
          std::vector<size_t> order(n);
          for (size_t i = 0; i < order.size(); ++i) order[i] = i;
          shuffle(order);
          std::vector<int64_t> b2, d2;
          for (size_t i : order) b2.push_back(bls[i]), d2.push_back(disps[i]);
          bls = b2, disps = d2;
        }
        if (o_.allow_negative_strides && pct(30)) {
          int64_t shift = uni(1, std::max<int64_t>(1, cursor));
          for (auto& d : disps) d -= shift;
        }
        if (fixed) return one(h ? Kind::kHindexedBlock : Kind::kIndexedBlock, {common}, {disps});
        return one(h ? Kind::kHindexed : Kind::kIndexed, {}, {bls, disps});
      }
      case kSub: {
        int64_t nd = uni(1, 3);
        std::vector<int64_t> sizes, subs, starts;
        for (int64_t i = 0; i < nd; ++i) {
          int64_t size = uni(1, 5);
          int64_t sub = pct(30) ? 1 : uni(1, size);
          sizes.push_back(size);
          subs.push_back(sub);
          starts.push_back(uni(0, size - sub));
        }
        return one(Kind::kSubarray, {pct(50) ? kOrderC : kOrderFortran}, {sizes, subs, starts});
      }
      case kDarr: {
        int64_t nd = uni(1, 3), nprocs = 1;
        std::vector<int64_t> gsizes, distribs, dargs, psizes;
        for (int64_t i = 0; i < nd; ++i) {
          int64_t p = nprocs < 8 ? uni(1, 3) : 1;
          nprocs *= p;
          int64_t g = uni(1, 7);
          int64_t d = p == 1 ? uni(0, 2) : uni(0, 1);
          int64_t darg = kDefaultDarg;
          if (d == kDistribBlock && pct(50)) darg = uni((g + p - 1) / p, g);
          if (d == kDistribCyclic && pct(50)) darg = uni(1, 3);
          gsizes.push_back(g), distribs.push_back(d), dargs.push_back(darg), psizes.push_back(p);
        }
        return one(Kind::kDarray, {nprocs, uni(0, nprocs - 1), pct(50) ? kOrderC : kOrderFortran},
                   {gsizes, distribs, dargs, psizes});
      }
      case kResize: {
        int64_t lb = cl.lb();
        switch (uni(0, 3)) {
          case 0:
            break;
          case 1:
            lb -= uni(1, 16);
            break;
          case 2:
            lb = cl.true_lb + uni(1, 8);
            break;
          default:
            lb = -uni(1, 32);
            break;
        }
        int64_t ext = e;
        switch (uni(0, 3)) {
          case 0:
            break;
          case 1:
            ext += uni(1, 32);
            break;
          case 2:
            ext = uni(1, std::max<int64_t>(1, e - 1));
            break;
          default:
            ext = (std::max(e, cl.true_ub - lb) + 15) / 16 * 16;
            break;
        }
        return one(Kind::kResized, {lb, ext});
      }
      default:
        return one(Kind::kDup, {});
    }
  }

  int weight(int pick, bool leaf_ok, int w) const {
    if (pick == 0 && !leaf_ok) return 0;
    if (pick == 10 && !o_.allow_darray) return 0;
    return w;
  }

  // Classic transposes: hvector(n,1,e,vector(m,1,n,T)) or contiguous(n,resized(0,e,vector...)).
  std::optional<Node> transpose(int depth) {
    if (depth < 2) return std::nullopt;
    Node t = depth > 3 && pct(30) ? gen(depth - 3) : leaf();
    int64_t n = uni(2, 5), m = uni(2, 5), e = t.layout.extent();
    Spec column = make(Kind::kVector, {m, 1, n}, {}, {t.spec});
    Spec s = depth < 3 + spec_depth(t.spec) || pct(50)
                 ? make(Kind::kHvector, {n, 1, e}, {}, {column})
                 : make(Kind::kContiguous, {n}, {}, {make(Kind::kResized, {0, e}, {}, {column})});
    auto l = layout_of(s, o_.max_size_bytes);
    if (!l || !inner_ok(*l)) return std::nullopt;
    return Node{std::move(s), std::move(*l)};
  }

  std::optional<Node> struct_type(int depth) {
    int64_t n = uni(1, 4), cursor = 0;
    std::vector<Node> members;
    std::vector<int64_t> bls, disps;
    for (int64_t i = 0; i < n; ++i) {
      members.push_back(pct(50) ? leaf() : gen(depth - 1));
      const Layout& c = members.back().layout;
      int64_t bl = pct(5) ? 0 : uni(1, 3), e = c.extent();
      // Place the block's data right after the previous one (plus a gap or alignment).
      int64_t lo = c.true_lb + std::min<int64_t>(0, std::max<int64_t>(bl - 1, 0) * e);
      int64_t hi = c.true_ub + std::max<int64_t>(0, std::max<int64_t>(bl - 1, 0) * e);
      int64_t align = int64_t{1} << uni(0, 3);
      cursor = (cursor + align - 1) / align * align;
      bls.push_back(bl);
      disps.push_back(cursor - lo);
      cursor += hi - lo + (pct(50) ? 0 : uni(1, 6));
    }
    if (pct(40)) {  // typemap order differs from memory order
      std::vector<size_t> order(n);
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      shuffle(order);
      std::vector<Node> m2;
      std::vector<int64_t> b2, d2;
      for (size_t i : order) m2.push_back(members[i]), b2.push_back(bls[i]), d2.push_back(disps[i]);
      members = std::move(m2), bls = b2, disps = d2;
    }
    if (o_.allow_negative_strides && pct(30)) {
      int64_t shift = uni(1, std::max<int64_t>(1, cursor));
      for (auto& d : disps) d -= shift;
    }
    std::vector<Spec> specs;
    std::vector<Layout> kids;
    for (auto& m : members) specs.push_back(m.spec), kids.push_back(m.layout);
    Spec s = make(Kind::kStruct, {}, {bls, disps}, specs);
    auto natural = combine(s, kids, o_.max_size_bytes);
    if (!natural) return std::nullopt;
    if (STRIDER_HAVE_MPI_LB && o_.allow_lb_ub_markers && pct(25)) {
      // Markers outside the data, with an extent no struct padding would change.
      int64_t lb = natural->plain.lb - (pct(50) ? 0 : uni(1, 8));
      int64_t ub = lb + (natural->plain.ub - lb + 15) / 16 * 16 + 16 * uni(0, 1);
      auto insert = [&](std::string_view name, int64_t disp) {
        size_t at = uni(0, s.children.size());
        Spec marker;
        marker.name = std::string(name);
        s.children.insert(s.children.begin() + at, marker);
        s.lists[0].insert(s.lists[0].begin() + at, 1);
        s.lists[1].insert(s.lists[1].begin() + at, disp);
        kids.insert(kids.begin() + at, *layout_rec(marker, 0));
      };
      if (pct(60) || lb != natural->plain.lb) insert("lb", lb);
      insert("ub", ub);
    }
    return wrap(std::move(s), std::move(kids), depth);
  }
};

}  // namespace

std::optional<Layout> layout_of(const Spec& spec, int64_t max_size) {
  return layout_rec(spec, max_size);
}

bool has_overlap(const Layout& layout) {
  std::vector<Run> runs = layout.runs;
  std::sort(runs.begin(), runs.end(),
            [](const Run& a, const Run& b) { return a.offset < b.offset; });
  for (size_t i = 1; i < runs.size(); ++i) {
    if (runs[i - 1].offset + runs[i - 1].length > runs[i].offset) return true;
  }
  return false;
}

bool is_count_safe(const Layout& layout) {
  const int64_t e = layout.extent();
  if (layout.size == 0) return true;
  if (e <= 0 || layout.size > e) return false;
  std::vector<bool> seen(static_cast<size_t>(e));
  for (const Run& r : layout.runs) {
    for (int64_t b = r.offset; b < r.offset + r.length; ++b) {
      int64_t m = ((b - layout.lb()) % e + e) % e;
      if (seen[m]) return false;
      seen[m] = true;
    }
  }
  return true;
}

std::string random_type(std::mt19937_64& rng, const RandomTypeOptions& opts) {
  return format(Generator(rng, opts).top().spec);
}

}  // namespace strider::typespec
