#include "plan/decode.hpp"

#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "ir/constructors.hpp"
#include "runtime/mpi_library.hpp"

namespace strider::decode {
namespace {

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw Unsupported(std::string(what) + " failed");
}

// The envelope and contents of a derived type. The child handles that get_contents returns
// are new references: derived ones are freed here (named ones must not be).
// The list entries left to decode, charged from each envelope before its contents are copied.
struct Budget {
  std::int64_t entries_left;
  std::int64_t cap;

  void charge(int combiner, int ni, int na, int nt) {
    std::int64_t n = 0;
    switch (combiner) {
      case MPI_COMBINER_INDEXED:
        n = (ni - 1) / 2;
        break;
      case MPI_COMBINER_INDEXED_BLOCK:
        n = ni - 2;
        break;
      case MPI_COMBINER_HINDEXED:
      case MPI_COMBINER_HINDEXED_BLOCK:
        n = na;
        break;
      case MPI_COMBINER_STRUCT:
        n = nt;
        break;
      default:
        return;
    }
    entries_left -= n;
    if (entries_left < 0) {
      throw Unsupported("more than " + std::to_string(cap) + " block-list entries");
    }
  }
};

// The contents of a derived type in the classic constructors' order: integer arguments in
// `ints`, address arguments in `addrs` (64-bit either way). A type made by a large-count
// constructor (MPI_Type_vector_c, ..., as mpi4py makes them where the MPI has them) reports its
// count arguments apart (MPI_Type_get_contents_c's large counts); they are put back where the
// classic constructor has them, so that one decoder reads both.
class Contents {
 public:
  Contents(MPI_Datatype type, Budget& budget) {
    if (origin_of(type) == Origin::Unknown) throw Unsupported("unreadable datatype envelope");
#if MPI_VERSION >= 4
    MPI_Count ni = 0, na = 0, nc = 0, nt = 0;
    check(PMPI_Type_get_envelope_c(type, &ni, &na, &nc, &nt, &combiner), "MPI_Type_get_envelope_c");
    if (combiner == MPI_COMBINER_NAMED) return;
    charge_large(budget, ni, na, nc, nt);
    std::vector<int> i(static_cast<std::size_t>(ni));
    std::vector<MPI_Aint> a(static_cast<std::size_t>(na));
    std::vector<MPI_Count> large(static_cast<std::size_t>(nc));
    types.resize(static_cast<std::size_t>(nt));
    check(PMPI_Type_get_contents_c(type, ni, na, nc, nt, i.data(), a.data(), large.data(),
                                   types.data()),
          "MPI_Type_get_contents_c");
    ints.assign(i.begin(), i.end());
    addrs.assign(a.begin(), a.end());
    if (nc > 0) put_back_large_counts(large);
#else
    int ni = 0, na = 0, nt = 0;
    check(PMPI_Type_get_envelope(type, &ni, &na, &nt, &combiner), "MPI_Type_get_envelope");
    if (combiner == MPI_COMBINER_NAMED) return;
    budget.charge(combiner, ni, na, nt);
    std::vector<int> i(static_cast<std::size_t>(ni));
    std::vector<MPI_Aint> a(static_cast<std::size_t>(na));
    types.resize(static_cast<std::size_t>(nt));
    check(PMPI_Type_get_contents(type, ni, na, nt, i.data(), a.data(), types.data()),
          "MPI_Type_get_contents");
    ints.assign(i.begin(), i.end());
    addrs.assign(a.begin(), a.end());
#endif
  }
  ~Contents() {
    for (MPI_Datatype& t : types) {
      if (origin_of(t) == Origin::Derived) PMPI_Type_free(&t);
    }
  }
  Contents(const Contents&) = delete;
  Contents& operator=(const Contents&) = delete;

  int combiner = MPI_COMBINER_NAMED;
  std::vector<std::int64_t> ints;
  std::vector<std::int64_t> addrs;
  std::vector<MPI_Datatype> types;

  std::vector<std::int64_t> int_range(std::size_t first, std::size_t n) const {
    if (first + n > ints.size()) throw Unsupported("malformed datatype contents");
    return {ints.begin() + first, ints.begin() + first + n};
  }
  std::vector<std::int64_t> addr_range(std::size_t first, std::size_t n) const {
    if (first + n > addrs.size()) throw Unsupported("malformed datatype contents");
    return {addrs.begin() + first, addrs.begin() + first + n};
  }

 private:
#if MPI_VERSION >= 4
  // The budget charged as for the classic constructor's envelope, before anything is copied.
  void charge_large(Budget& budget, MPI_Count ni, MPI_Count na, MPI_Count nc, MPI_Count nt) const {
    MPI_Count i = ni, a = na;
    if (nc > 0) {
      switch (combiner) {
        case MPI_COMBINER_HINDEXED:
        case MPI_COMBINER_STRUCT:  // 1 + 2n large counts: count, n blocklengths, n displacements
          i = 1 + (nc - 1) / 2;
          a = (nc - 1) / 2;
          break;
        case MPI_COMBINER_HINDEXED_BLOCK:  // count, blocklength, n displacements
          i = 2;
          a = nc - 2;
          break;
        default:
          i = ni + nc;
          break;
      }
    }
    const auto fit = [](MPI_Count v) {
      if (v > INT_MAX) throw Unsupported("more block-list entries than an int holds");
      return static_cast<int>(v);
    };
    budget.charge(combiner, fit(i), fit(a), fit(nt));
  }
#endif

  // The large-count constructors' arguments (MPI 4.1, 5.1.13): every count, blocklength,
  // displacement, stride, size and bound is a large count, in the order of the constructor's
  // arguments; ndims, order, rank, distributions, dargs and psizes stay integers.
  void put_back_large_counts(const std::vector<MPI_Count>& large) {
    const std::vector<std::int64_t> c(large.begin(), large.end());
    const auto first = [&](std::size_t n) {
      if (n > c.size()) throw Unsupported("malformed datatype contents");
      return std::vector<std::int64_t>(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(n));
    };
    const auto rest = [&](std::size_t from) {
      if (from > c.size()) throw Unsupported("malformed datatype contents");
      return std::vector<std::int64_t>(c.begin() + static_cast<std::ptrdiff_t>(from), c.end());
    };
    const std::size_t n = c.empty() ? 0 : static_cast<std::size_t>(std::max<std::int64_t>(0, c[0]));
    switch (combiner) {
      case MPI_COMBINER_CONTIGUOUS:
      case MPI_COMBINER_VECTOR:
      case MPI_COMBINER_INDEXED:        // count, blocklengths, displacements
      case MPI_COMBINER_INDEXED_BLOCK:  // count, blocklength, displacements
        ints = c;
        break;
      case MPI_COMBINER_HVECTOR:  // count, blocklength | stride
        ints = first(2);
        addrs = rest(2);
        break;
      case MPI_COMBINER_HINDEXED:  // count, blocklengths | displacements
      case MPI_COMBINER_STRUCT:
        ints = first(1 + n);
        addrs = rest(1 + n);
        break;
      case MPI_COMBINER_HINDEXED_BLOCK:  // count, blocklength | displacements
        ints = first(2);
        addrs = rest(2);
        break;
      case MPI_COMBINER_RESIZED:  // lb, extent
        addrs = c;
        break;
      case MPI_COMBINER_SUBARRAY: {  // ints: ndims, order; large: sizes, subsizes, starts
        if (ints.size() != 2) throw Unsupported("malformed datatype contents");
        const std::int64_t order = ints[1];
        ints.resize(1);
        ints.insert(ints.end(), c.begin(), c.end());
        ints.push_back(order);
        break;
      }
      case MPI_COMBINER_DARRAY: {  // ints: size, rank, ndims, ...; large: gsizes
        if (ints.size() < 3) throw Unsupported("malformed datatype contents");
        ints.insert(ints.begin() + 3, c.begin(), c.end());
        break;
      }
      default:
        throw Unsupported("combiner " + std::to_string(combiner) + " with large counts");
    }
  }
};

ir::Node layout_of(MPI_Datatype type, Budget& budget);

ir::Child child_of(MPI_Datatype type, Budget& budget) {
  MPI_Count lb = 0, extent = 0;
  check(PMPI_Type_get_extent_x(type, &lb, &extent), "MPI_Type_get_extent_x");
  return {layout_of(type, budget), extent};
}

ir::Order order_of(int mpi_order) {
  if (mpi_order == MPI_ORDER_C) return ir::Order::C;
  if (mpi_order == MPI_ORDER_FORTRAN) return ir::Order::Fortran;
  throw Unsupported("unknown array order");
}

ir::Distribution distribution_of(int mpi_distrib) {
  if (mpi_distrib == MPI_DISTRIBUTE_BLOCK) return ir::Distribution::Block;
  if (mpi_distrib == MPI_DISTRIBUTE_CYCLIC) return ir::Distribution::Cyclic;
  if (mpi_distrib == MPI_DISTRIBUTE_NONE) return ir::Distribution::None;
  throw Unsupported("unknown darray distribution");
}

ir::Node layout_of(MPI_Datatype type, Budget& budget) {
  const Contents c(type, budget);
  const auto& i = c.ints;
  auto first_child = [&] {
    if (c.types.empty()) throw Unsupported("malformed datatype contents");
    return child_of(c.types[0], budget);
  };
  auto need_ints = [&](std::size_t n) {
    if (i.size() < n) throw Unsupported("malformed datatype contents");
  };
  switch (c.combiner) {
    case MPI_COMBINER_NAMED:
      return named_layout(type);
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:  // bounds only; the bytes are the child's
      return first_child().layout;
    case MPI_COMBINER_CONTIGUOUS:
      need_ints(1);
      return ir::contiguous(i[0], first_child());
    case MPI_COMBINER_VECTOR:
      need_ints(3);
      return ir::vector(i[0], i[1], i[2], first_child());
    case MPI_COMBINER_HVECTOR:
      need_ints(2);
      return ir::hvector(i[0], i[1], c.addr_range(0, 1)[0], first_child());
    case MPI_COMBINER_INDEXED: {
      need_ints(1);
      const auto n = static_cast<std::size_t>(i[0]);
      return ir::indexed(c.int_range(1, n), c.int_range(1 + n, n), first_child());
    }
    case MPI_COMBINER_HINDEXED: {
      need_ints(1);
      const auto n = static_cast<std::size_t>(i[0]);
      return ir::hindexed(c.int_range(1, n), c.addr_range(0, n), first_child());
    }
    case MPI_COMBINER_INDEXED_BLOCK: {
      need_ints(2);
      const auto n = static_cast<std::size_t>(i[0]);
      return ir::indexed_block(i[1], c.int_range(2, n), first_child());
    }
    case MPI_COMBINER_HINDEXED_BLOCK: {
      need_ints(2);
      const auto n = static_cast<std::size_t>(i[0]);
      return ir::hindexed_block(i[1], c.addr_range(0, n), first_child());
    }
    case MPI_COMBINER_STRUCT: {
      need_ints(1);
      const auto n = static_cast<std::size_t>(i[0]);
      if (c.types.size() < n) throw Unsupported("malformed datatype contents");
      std::vector<ir::Child> children;
      children.reserve(n);
      for (std::size_t k = 0; k < n; ++k) children.push_back(child_of(c.types[k], budget));
      return ir::structure(c.int_range(1, n), c.addr_range(0, n), children);
    }
    case MPI_COMBINER_SUBARRAY: {
      need_ints(1);
      const auto n = static_cast<std::size_t>(i[0]);
      need_ints(3 * n + 2);
      return ir::subarray(order_of(i[3 * n + 1]), c.int_range(1, n), c.int_range(1 + n, n),
                          c.int_range(1 + 2 * n, n), first_child());
    }
    case MPI_COMBINER_DARRAY: {
      need_ints(3);
      const auto n = static_cast<std::size_t>(i[2]);
      need_ints(4 * n + 4);
      std::vector<ir::Distribution> distribs;
      for (std::size_t k = 0; k < n; ++k) distribs.push_back(distribution_of(i[3 + n + k]));
      std::vector<std::int64_t> dargs = c.int_range(3 + 2 * n, n);
      for (std::int64_t& d : dargs) {
        if (d == MPI_DISTRIBUTE_DFLT_DARG) d = ir::kDefaultDistributionArg;
      }
      return ir::darray(i[0], i[1], order_of(i[3 + 4 * n]), c.int_range(3, n), distribs, dargs,
                        c.int_range(3 + 3 * n, n), first_child());
    }
    case MPI_COMBINER_F90_REAL:
    case MPI_COMBINER_F90_COMPLEX:
    case MPI_COMBINER_F90_INTEGER: {
      // Parameterized predefined types: dense, as the MPI's own size and true extent confirm.
      const Bounds b = bounds_of(type);
      if (b.size != b.true_extent) throw Unsupported("F90 type with holes");
      return ir::Node::dense(b.true_lb, b.size);
    }
    default:
      throw Unsupported("combiner " + std::to_string(c.combiner) + " is not supported");
  }
}

// Open MPI 4.1 treats a (h)vector whose byte stride is -1 as a forward contiguous run.
bool has_minus_one_stride(const ir::Node& node) {
  if (node.is_stream() && node.stride == -1) return true;
  for (const ir::Node& c : node.children) {
    if (has_minus_one_stride(c)) return true;
  }
  return false;
}

bool mpi_misreports_span(const ir::Node& layout) {
  return runtime::mpi_library().family == runtime::MpiFamily::OpenMpi &&
         has_minus_one_stride(layout);
}

}  // namespace

Origin origin_of(MPI_Datatype type) {
  int combiner = MPI_COMBINER_NAMED;
#if MPI_VERSION >= 4
  // Large-count types make the classic query fail (fatally, under the default handler); the _c
  // query reads every type, and Contents decodes the large counts too.
  MPI_Count ni = 0, na = 0, nc = 0, nt = 0;
  if (PMPI_Type_get_envelope_c(type, &ni, &na, &nc, &nt, &combiner) != MPI_SUCCESS) {
    return Origin::Unknown;
  }
#else
  int ni = 0, na = 0, nt = 0;
  if (PMPI_Type_get_envelope(type, &ni, &na, &nt, &combiner) != MPI_SUCCESS) {
    return Origin::Unknown;
  }
#endif
  if (combiner == MPI_COMBINER_NAMED || combiner == MPI_COMBINER_F90_REAL ||
      combiner == MPI_COMBINER_F90_COMPLEX || combiner == MPI_COMBINER_F90_INTEGER) {
    return Origin::Predefined;
  }
  return Origin::Derived;
}

Bounds bounds_of(MPI_Datatype type) {
  MPI_Count size = 0, lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  check(PMPI_Type_size_x(type, &size), "MPI_Type_size_x");
  check(PMPI_Type_get_extent_x(type, &lb, &extent), "MPI_Type_get_extent_x");
  check(PMPI_Type_get_true_extent_x(type, &true_lb, &true_extent), "MPI_Type_get_true_extent_x");
  if (size == MPI_UNDEFINED || extent == MPI_UNDEFINED) throw Unsupported("type too large");
  return {size, lb, extent, true_lb, true_extent};
}

ir::Node decode(MPI_Datatype type, const Bounds& bounds, std::int64_t max_entries) {
  ir::Node layout;
  Budget budget{max_entries, max_entries};
  try {
    layout = layout_of(type, budget);
  } catch (const std::invalid_argument& e) {
    throw Unsupported(e.what());
  }
  // Cross-check with the MPI: the number of bytes and their span must agree.
  if (ir::packed_size(layout) != bounds.size) {
    throw Unsupported("decoded size " + std::to_string(ir::packed_size(layout)) +
                      " differs from MPI's " + std::to_string(bounds.size));
  }
  // The span must agree too, except where the MPI is known to misreport it: Open MPI 4.1 treats a
  // (h)vector whose byte stride is -1 as a forward contiguous run, so its bounds (and its
  // MPI_Pack) disagree with the standard's typemap, which Strider follows (as MPICH does).
  if (bounds.size > 0 && !mpi_misreports_span(layout)) {
    const ir::Span span = ir::true_span(layout);
    if (span.lo != bounds.true_lb || span.hi - span.lo != bounds.true_extent) {
      throw Unsupported("decoded true extent " + std::to_string(span.hi - span.lo) +
                        " differs from MPI's " + std::to_string(bounds.true_extent));
    }
  }
  return layout;
}

}  // namespace strider::decode
