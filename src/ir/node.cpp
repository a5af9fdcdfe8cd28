#include "ir/node.hpp"

#include <algorithm>
#include <limits>

namespace strider::ir {

Node Node::dense(std::int64_t offset, std::int64_t bytes) {
  Node n;
  n.kind = Kind::Dense;
  n.offset = offset;
  n.bytes = bytes;
  return n;
}

Node Node::stream(std::int64_t offset, std::int64_t count, std::int64_t stride, Node child) {
  Node n;
  n.kind = Kind::Stream;
  n.offset = offset;
  n.count = count;
  n.stride = stride;
  n.children.push_back(std::move(child));
  return n;
}

Node Node::list(std::vector<Node> items) {
  Node n;
  n.kind = Kind::List;
  n.children = std::move(items);
  return n;
}

std::int64_t packed_size(const Node& node) {
  switch (node.kind) {
    case Kind::Dense:
      return node.bytes;
    case Kind::Stream:
      return node.count * packed_size(node.child());
    case Kind::List: {
      std::int64_t total = 0;
      for (const Node& item : node.children) total += packed_size(item);
      return total;
    }
  }
  return 0;
}

namespace {

// Returns false when the node holds no byte.
bool span_of(const Node& node, Span& out) {
  switch (node.kind) {
    case Kind::Dense:
      if (node.bytes <= 0) return false;
      out = {node.offset, node.offset + node.bytes};
      return true;
    case Kind::Stream: {
      Span inner;
      if (node.count <= 0 || !span_of(node.child(), inner)) return false;
      const std::int64_t last = (node.count - 1) * node.stride;
      out.lo = node.offset + inner.lo + std::min<std::int64_t>(0, last);
      out.hi = node.offset + inner.hi + std::max<std::int64_t>(0, last);
      return true;
    }
    case Kind::List: {
      bool any = false;
      Span acc{std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::min()};
      for (const Node& item : node.children) {
        Span s;
        if (!span_of(item, s)) continue;
        any = true;
        acc.lo = std::min(acc.lo, s.lo + node.offset);
        acc.hi = std::max(acc.hi, s.hi + node.offset);
      }
      if (any) out = acc;
      return any;
    }
  }
  return false;
}

void append(const Node& node, std::string& out) {
  switch (node.kind) {
    case Kind::Dense:
      out += "dense(" + std::to_string(node.offset) + ", " + std::to_string(node.bytes) + ")";
      return;
    case Kind::Stream:
      out += "stream(" + std::to_string(node.offset) + ", " + std::to_string(node.count) + ", " +
             std::to_string(node.stride) + ", ";
      append(node.child(), out);
      out += ")";
      return;
    case Kind::List:
      out += "list(";
      if (node.offset != 0) out += "@" + std::to_string(node.offset) + ": ";
      for (std::size_t i = 0; i < node.children.size(); ++i) {
        if (i) out += ", ";
        append(node.children[i], out);
      }
      out += ")";
      return;
  }
}

}  // namespace

Span true_span(const Node& node) {
  Span s;
  return span_of(node, s) ? s : Span{};
}

int depth(const Node& node) {
  int deepest = 0;
  for (const Node& c : node.children) deepest = std::max(deepest, depth(c));
  return 1 + deepest;
}

std::string to_string(const Node& node) {
  std::string out;
  append(node, out);
  return out;
}

}  // namespace strider::ir
