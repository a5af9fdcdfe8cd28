// The datatype IR: a small tree of byte-placement nodes, independent of MPI.
//
// A node describes an ordered sequence of bytes (the typemap, flattened to bytes) relative to
// an origin. The order of that sequence is the packed byte order and is never changed by any
// rewrite in this project.
//
//   Dense  {offset, bytes}                   bytes [offset, offset + bytes)
//   Stream {offset, count, stride, child}    child placed at offset + i*stride, i = 0..count-1
//   List   {items...}                        the items' sequences, concatenated in order
//
// An empty List is the canonical empty node.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace strider::ir {

enum class Kind : std::uint8_t { Dense, Stream, List };

struct Node {
  Kind kind = Kind::List;
  std::int64_t offset = 0;
  std::int64_t bytes = 0;      // Dense only
  std::int64_t count = 0;      // Stream only
  std::int64_t stride = 0;     // Stream only
  std::vector<Node> children;  // Stream: exactly one; List: the items

  static Node dense(std::int64_t offset, std::int64_t bytes);
  static Node stream(std::int64_t offset, std::int64_t count, std::int64_t stride, Node child);
  static Node list(std::vector<Node> items);
  static Node empty() { return Node{}; }

  bool is_dense() const { return kind == Kind::Dense; }
  bool is_stream() const { return kind == Kind::Stream; }
  bool is_list() const { return kind == Kind::List; }
  const Node& child() const { return children.front(); }
  Node& child() { return children.front(); }

  // Spelled out (not defaulted) because CUDA sources include this header as C++17.
  friend bool operator==(const Node& a, const Node& b) {
    return a.kind == b.kind && a.offset == b.offset && a.bytes == b.bytes && a.count == b.count &&
           a.stride == b.stride && a.children == b.children;
  }
};

// Number of bytes in the node's sequence (the packed size of one element).
std::int64_t packed_size(const Node& node);

// Lowest and one-past-highest byte offsets touched (true lb / true ub); {0, 0} when empty.
struct Span {
  std::int64_t lo = 0;
  std::int64_t hi = 0;
};
Span true_span(const Node& node);

// Nesting depth (Dense = 1).
int depth(const Node& node);

// Compact one-line text, e.g. stream(0, 47, 131072, dense(0, 100)).
std::string to_string(const Node& node);

}  // namespace strider::ir
