#include "canon/strided_block.hpp"

namespace strider::canon {

std::int64_t StridedBlock::blocks() const {
  std::int64_t n = 1;
  for (const Dim& d : dims) n *= d.count;
  return n;
}

StridedBlock normalized(StridedBlock sb) {
  if (sb.empty()) return {};
  DimList dims;
  for (const Dim& d : sb.dims) {
    if (d.count == 1) continue;  // stream elision
    if (dims.empty() && d.stride == sb.block) {
      sb.block *= d.count;  // dense folding
      continue;
    }
    if (!dims.empty() && d.stride == dims.back().count * dims.back().stride) {
      dims.back().count *= d.count;  // stream flattening
      continue;
    }
    dims.push_back(d);
  }
  sb.dims = std::move(dims);
  return sb;
}

bool try_append(StridedBlock& run, const StridedBlock& next) {
  if (run.empty() || next.empty()) return false;
  if (run.dims.empty() && next.dims.empty() && next.offset == run.offset + run.block) {
    run.block += next.block;
    return true;
  }
  // View `run` as (count, stride) repetitions of `unit`, where unit is run minus its outermost
  // dim when that dim may be extended, else run itself with count 1.
  auto unit_equal = [](const StridedBlock& a, const StridedBlock& b, std::size_t a_dims) {
    if (a.block != b.block || b.dims.size() != a_dims) return false;
    for (std::size_t k = 0; k < a_dims; ++k) {
      if (!(a.dims[k] == b.dims[k])) return false;
    }
    return true;
  };
  const std::int64_t delta = next.offset - run.offset;
  if (!run.dims.empty() && unit_equal(run, next, run.dims.size() - 1)) {
    const Dim outer = run.dims.back();
    if (delta == outer.count * outer.stride) {
      run.dims.back().count += 1;
      run = normalized(std::move(run));
      return true;
    }
  }
  if (unit_equal(run, next, run.dims.size()) && run.dims.size() < kMaxDims) {
    run.dims.push_back(Dim{2, delta});
    run = normalized(std::move(run));
    return true;
  }
  return false;
}

std::string to_string(const StridedBlock& sb) {
  std::string out = "{off " + std::to_string(sb.offset) + ", block " + std::to_string(sb.block);
  for (const Dim& d : sb.dims) {
    out += ", " + std::to_string(d.count) + "x" + std::to_string(d.stride);
  }
  return out + "}";
}

void derive_summaries(CanonicalForm& form) {
  std::int64_t piece_bytes = 0;
  form.layout_bits = 0;
  form.max_piece_count = 0;
  for (const StridedBlock& sb : form.pieces) {
    piece_bytes += sb.packed_bytes();
    form.layout_bits |= magnitude(sb.offset) | static_cast<std::uint64_t>(sb.block);
    for (const Dim& d : sb.dims) {
      form.layout_bits |= magnitude(d.stride);
      form.max_piece_count = std::max(form.max_piece_count, d.count);
    }
  }
  form.size = piece_bytes * form.repetitions();
}

std::int64_t CanonicalForm::repetitions() const {
  std::int64_t n = 1;
  for (const Dim& d : repeat) n *= d.count;
  return n;
}

std::string to_string(const CanonicalForm& form) {
  std::string out = form.strided() ? "strided " : std::to_string(form.pieces.size()) + " pieces ";
  if (!form.repeat.empty()) {
    out += "repeated";
    for (const Dim& d : form.repeat)
      out += " " + std::to_string(d.count) + "x" + std::to_string(d.stride);
    out += " ";
  }
  out += "(size " + std::to_string(form.size) + "): ";
  constexpr std::size_t kShown = 8;
  for (std::size_t i = 0; i < form.pieces.size() && i < kShown; ++i) {
    if (i) out += " ";
    out += to_string(form.pieces[i]);
  }
  if (form.pieces.size() > kShown) out += " ...";
  if (form.pieces.empty()) out += "empty";
  return out;
}

}  // namespace strider::canon
