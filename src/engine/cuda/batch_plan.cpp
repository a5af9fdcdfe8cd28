#include "engine/cuda/batch_plan.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "engine/cuda/batch_offset.hpp"

namespace strider::engine::cuda {
namespace {

constexpr std::uint64_t k32BitLimit = std::uint64_t{1} << 31;
// The batch's whole grid stays below the launch limit (2^31 - 1 blocks) with one block per job
// to spare.
constexpr std::uint64_t kMaxBatchBlocks = std::uint64_t{1} << 30;

std::int64_t side_bytes(const BatchSide& s) { return s.form ? s.count * s.form->size : s.count; }

// The side's shape with words of at most `max_word` bytes (the origin's alignment decides too;
// the other side's is the caller's); false when no kernel takes the form. A strided side of one
// dense block is contiguous.
bool shape_side(const BatchSide& s, int max_word, SideShape& out) {
  out = SideShape{};
  out.base = s.base;
  out.form = s.form;
  out.state = s.state;
  if (!s.form) return true;
  const auto origin = reinterpret_cast<std::uintptr_t>(s.base);
  if (auto strided = strided_shape(*s.form, s.extent, s.count, origin, 0, max_word)) {
    out.strided = *strided;
    if (strided->block.dims.empty()) {
      out.base = s.base + strided->block.offset;
    } else {
      out.kind = MapKind::Strided;
    }
    return true;
  }
  if (auto list = list_shape(*s.form, s.extent, s.count, origin, 0, max_word)) {
    out.kind = MapKind::List;
    out.list = *list;
    return true;
  }
  return false;
}

int side_word(const SideShape& s, std::int64_t bytes, int max_word) {
  switch (s.kind) {
    case MapKind::Strided:
      return s.strided.word;
    case MapKind::List:
      return s.list.word;
    default:
      return std::min(max_word, word_size_for({reinterpret_cast<std::uintptr_t>(s.base),
                                               static_cast<std::uint64_t>(bytes)}));
  }
}

bool side_needs_64bit(const SideShape& s, std::uint64_t words) {
  switch (s.kind) {
    case MapKind::Strided:
      return !fits_32bit(s.strided);
    case MapKind::List:
      return !fits_32bit(*s.form, s.list);
    default:
      return words >= k32BitLimit;
  }
}

template <class Div>
std::size_t table_bytes(const BatchShape& shape) {
  std::size_t bytes = shape.copies.size() * sizeof(BatchJob);
  for (const CopyShape& c : shape.copies) {
    bytes += map_record_bytes<Div>(c.from.kind) + map_record_bytes<Div>(c.to.kind);
  }
  return bytes;
}

template <class Div>
void write_record(const SideShape& s, std::byte* at) {
  const MapHead head{s.kind, 0, s.base};
  std::memcpy(at, &head, sizeof head);
  std::byte* launch = at + sizeof(MapHead);
  if (s.kind == MapKind::Strided) {
    StridedLaunch<Div> l;
    if constexpr (std::is_same_v<Div, FastDivmod32>) {
      l = launch32(s.strided);
    } else {
      l = launch64(s.strided);
    }
    std::memcpy(launch, &l, sizeof l);
  } else if (s.kind == MapKind::List) {
    const ListLaunch<Div> l =
        list_launch<Div>(s.list, s.table, static_cast<int>(s.form->pieces.size()));
    std::memcpy(launch, &l, sizeof l);
  }
}

template <class Div>
BatchPlan plan_as(const BatchShape& shape, int multiprocessors, Span<std::byte> out) {
  BatchPlan plan;
  const std::size_t bytes = table_bytes<Div>(shape);
  if (out.size() < bytes || shape.copies.empty()) return plan;
  const std::size_t n = shape.copies.size();
  std::vector<std::uint64_t> blocks(n);
  std::uint64_t total = 0;
  for (std::size_t j = 0; j < n; ++j) {
    blocks[j] = grid_for(shape.copies[j].words, shape.copies[j].word, multiprocessors);
    total += blocks[j];
  }
  if (total > kMaxBatchBlocks) {
    // Proportional shares of the limit; the grid-stride loop covers the rest of each job.
    const std::uint64_t wanted = total;
    for (std::uint64_t& b : blocks) b = std::max<std::uint64_t>(1, b * kMaxBatchBlocks / wanted);
  }
  std::byte* table = out.data();
  std::size_t record = n * sizeof(BatchJob);
  std::uint64_t first = 0;
  for (std::size_t j = 0; j < n; ++j) {
    const CopyShape& c = shape.copies[j];
    BatchJob job;
    job.words = c.words;
    job.first_block = static_cast<std::uint32_t>(first);
    job.blocks = static_cast<std::uint32_t>(blocks[j]);
    job.word = c.word;
    job.from = static_cast<std::uint32_t>(record);
    write_record<Div>(c.from, table + record);
    record += map_record_bytes<Div>(c.from.kind);
    job.to = static_cast<std::uint32_t>(record);
    write_record<Div>(c.to, table + record);
    record += map_record_bytes<Div>(c.to.kind);
    std::memcpy(table + j * sizeof(BatchJob), &job, sizeof job);
    first += blocks[j];
  }
  plan.bytes = bytes;
  plan.jobs = static_cast<int>(n);
  plan.grid = static_cast<unsigned>(first);
  plan.wide = shape.wide;
  return plan;
}

// One block's threads, as the kernel runs them: each from its place in the job's virtual grid,
// a virtual grid apart.
template <int W, class Div>
std::uint64_t emulate_block(const BatchJob& job, const std::byte* table, std::uint32_t block) {
  using Index = typename IndexOf<Div>::type;
  const std::byte* from = table + job.from;
  const std::byte* to = table + job.to;
  const Index step = static_cast<Index>(job.blocks) * Policy::kThreads;
  const auto words = static_cast<Index>(job.words);
  std::uint64_t moved = 0;
  for (int t = 0; t < Policy::kThreads; ++t) {
    for (Index p = static_cast<Index>(block - job.first_block) * Policy::kThreads + t; p < words;
         p += step) {
      std::memcpy(map_address<W, Div>(to, p), map_address<W, Div>(from, p), W);
      ++moved;
    }
  }
  return moved;
}

template <class Div>
std::uint64_t emulate_as(const BatchPlan& plan, const std::byte* table) {
  std::vector<BatchJob> jobs(static_cast<std::size_t>(plan.jobs));
  std::memcpy(jobs.data(), table, jobs.size() * sizeof(BatchJob));
  std::uint64_t moved = 0;
  for (std::uint32_t block = 0; block < plan.grid; ++block) {
    const BatchJob& job = jobs[static_cast<std::size_t>(find_job(jobs.data(), plan.jobs, block))];
    switch (job.word) {
      case 16:
        moved += emulate_block<16, Div>(job, table, block);
        break;
      case 8:
        moved += emulate_block<8, Div>(job, table, block);
        break;
      case 4:
        moved += emulate_block<4, Div>(job, table, block);
        break;
      case 2:
        moved += emulate_block<2, Div>(job, table, block);
        break;
      default:
        moved += emulate_block<1, Div>(job, table, block);
        break;
    }
  }
  return moved;
}

}  // namespace

BatchStatus shape_batch(Span<const BatchCopy> copies, int max_word, BatchShape& out,
                        bool force_wide) {
  out.copies.clear();
  out.copies.reserve(copies.size());  // a shape is large: growing would copy them again and again
  out.wide = force_wide;
  for (const BatchCopy& copy : copies) {
    const std::int64_t bytes = side_bytes(copy.from);
    if (bytes != side_bytes(copy.to)) return BatchStatus::SizeMismatch;
    if (bytes <= 0) continue;
    CopyShape c;
    if (!shape_side(copy.from, max_word, c.from) || !shape_side(copy.to, max_word, c.to)) {
      return BatchStatus::NotSupported;
    }
    // The largest word both sides allow; the shapes again with it (a smaller power of two
    // divides whatever a larger one did).
    c.word = std::min(side_word(c.from, bytes, max_word), side_word(c.to, bytes, max_word));
    if (c.word != side_word(c.from, bytes, max_word)) shape_side(copy.from, c.word, c.from);
    if (c.word != side_word(c.to, bytes, max_word)) shape_side(copy.to, c.word, c.to);
    c.words = static_cast<std::uint64_t>(bytes / c.word);
    out.wide = out.wide || side_needs_64bit(c.from, c.words) || side_needs_64bit(c.to, c.words);
    out.copies.push_back(c);
  }
  return BatchStatus::Ok;
}

std::size_t batch_table_bytes(const BatchShape& shape) {
  return shape.wide ? table_bytes<Divmod64>(shape) : table_bytes<FastDivmod32>(shape);
}

std::size_t batch_table_bound(std::size_t copies) {
  const std::size_t widest =
      std::max(kMaxMapRecordBytes<Divmod64>, kMaxMapRecordBytes<FastDivmod32>);
  return copies * (sizeof(BatchJob) + 2 * widest);
}

BatchPlan plan_batch(const BatchShape& shape, int multiprocessors, Span<std::byte> out) {
  return shape.wide ? plan_as<Divmod64>(shape, multiprocessors, out)
                    : plan_as<FastDivmod32>(shape, multiprocessors, out);
}

std::uint64_t emulate_batch(const BatchPlan& plan, const std::byte* table) {
  if (plan.jobs == 0) return 0;
  return plan.wide ? emulate_as<Divmod64>(plan, table) : emulate_as<FastDivmod32>(plan, table);
}

}  // namespace strider::engine::cuda
