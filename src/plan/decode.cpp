#include "plan/decode.hpp"

#include <string>
#include <vector>

#include "ir/constructors.hpp"

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

class Contents {
 public:
  Contents(MPI_Datatype type, Budget& budget) {
    if (origin_of(type) == Origin::Unknown) throw Unsupported("unreadable datatype envelope");
    int ni = 0, na = 0, nt = 0;
    check(PMPI_Type_get_envelope(type, &ni, &na, &nt, &combiner), "MPI_Type_get_envelope");
    if (combiner == MPI_COMBINER_NAMED) return;
    budget.charge(combiner, ni, na, nt);
    ints.resize(ni);
    addrs.resize(na);
    types.resize(nt);
    check(PMPI_Type_get_contents(type, ni, na, nt, ints.data(), addrs.data(), types.data()),
          "MPI_Type_get_contents");
  }
  ~Contents() {
    for (MPI_Datatype& t : types) {
      if (origin_of(t) == Origin::Derived) PMPI_Type_free(&t);
    }
  }
  Contents(const Contents&) = delete;
  Contents& operator=(const Contents&) = delete;

  int combiner = MPI_COMBINER_NAMED;
  std::vector<int> ints;
  std::vector<MPI_Aint> addrs;
  std::vector<MPI_Datatype> types;

  std::vector<std::int64_t> int_range(std::size_t first, std::size_t n) const {
    if (first + n > ints.size()) throw Unsupported("malformed datatype contents");
    return {ints.begin() + first, ints.begin() + first + n};
  }
  std::vector<std::int64_t> addr_range(std::size_t first, std::size_t n) const {
    if (first + n > addrs.size()) throw Unsupported("malformed datatype contents");
    return {addrs.begin() + first, addrs.begin() + first + n};
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
#if defined(OPEN_MPI)
  return has_minus_one_stride(layout);
#else
  (void)layout;
  return false;
#endif
}

}  // namespace

Origin origin_of(MPI_Datatype type) {
  int combiner = MPI_COMBINER_NAMED;
#if MPI_VERSION >= 4
  // Large-count types make the classic query fail (fatally, under the default handler); the _c
  // query reads every type.
  MPI_Count ni = 0, na = 0, nc = 0, nt = 0;
  if (PMPI_Type_get_envelope_c(type, &ni, &na, &nc, &nt, &combiner) != MPI_SUCCESS) {
    return Origin::Unknown;
  }
  if (nc > 0) return Origin::Unknown;
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
