#include "typespec/type_spec.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <string_view>
#include <utility>

namespace strider::typespec {

bool large_count_constructors() {
#if MPI_VERSION >= 4
  static const bool on = [] {
    const char* v = std::getenv("STRIDER_TEST_LARGE_COUNT");
    return v != nullptr && std::string_view(v) == "1";
  }();
  return on;
#else
  return false;
#endif
}

namespace {

struct Keyword {
  std::string_view word;
  Kind kind;
};

constexpr std::array<Keyword, 12> kKeywords = {{
    {"contiguous", Kind::kContiguous},
    {"vector", Kind::kVector},
    {"hvector", Kind::kHvector},
    {"indexed", Kind::kIndexed},
    {"hindexed", Kind::kHindexed},
    {"indexed_block", Kind::kIndexedBlock},
    {"hindexed_block", Kind::kHindexedBlock},
    {"struct", Kind::kStruct},
    {"subarray", Kind::kSubarray},
    {"darray", Kind::kDarray},
    {"resized", Kind::kResized},
    {"dup", Kind::kDup},
}};

std::string_view keyword_of(Kind kind) {
  for (const auto& k : kKeywords) {
    if (k.kind == kind) return k.word;
  }
  return "?";
}

constexpr std::array<std::string_view, 3> kDistribWords = {"block", "cyclic", "none"};

// Recursive-descent parser over the grammar in the header. Tokens are words ([A-Za-z0-9_]+,
// so "2int" is one word), integers, and the punctuation ( ) [ ] ,.
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Spec parse_all() {
    Spec spec = parse_type();
    skip_ws();
    if (pos_ != text_.size()) fail("end of input");
    return spec;
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;

  void skip_ws() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  static bool is_word_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  }

  [[noreturn]] void fail(std::string_view expected) const { fail_at(pos_, expected); }

  [[noreturn]] void fail_at(size_t pos, std::string_view expected) const {
    std::string found = "end of input";
    if (pos < text_.size()) {
      size_t end = pos;
      while (end < text_.size() && is_word_char(text_[end])) ++end;
      if (end == pos) end = pos + 1;
      found = "'" + std::string(text_.substr(pos, end - pos)) + "'";
    }
    throw ParseError("column " + std::to_string(pos + 1) + ": expected " + std::string(expected) +
                         ", found " + found,
                     pos);
  }

  bool accept(char c) {
    skip_ws();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  void expect(char c) {
    if (!accept(c)) fail(std::string("'") + c + "'");
  }

  // Returns the next word (possibly empty, without consuming anything then).
  std::string_view word() {
    skip_ws();
    size_t start = pos_;
    while (pos_ < text_.size() && is_word_char(text_[pos_])) ++pos_;
    return text_.substr(start, pos_ - start);
  }

  int64_t integer() {
    skip_ws();
    size_t start = pos_;
    if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
    size_t digits = pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    if (pos_ == digits || (pos_ < text_.size() && is_word_char(text_[pos_]))) {
      pos_ = start;
      fail("an integer");
    }
    int64_t value = 0;
    auto [ptr, ec] = std::from_chars(text_.data() + start, text_.data() + pos_, value);
    if (ec != std::errc() || ptr != text_.data() + pos_) {
      pos_ = start;
      fail("an integer within 64 bits");
    }
    return value;
  }

  // '[' item {',' item} ']' or '[' ']'.
  template <class F>
  void list(F&& item) {
    expect('[');
    if (accept(']')) return;
    do {
      item();
    } while (accept(','));
    expect(']');
  }

  std::vector<int64_t> int_list() {
    std::vector<int64_t> out;
    list([&] { out.push_back(integer()); });
    return out;
  }

  int64_t order() {
    size_t at = (skip_ws(), pos_);
    std::string_view w = word();
    if (w == "C") return kOrderC;
    if (w == "F") return kOrderFortran;
    fail_at(at, "order C or F");
  }

  std::vector<int64_t> distrib_list() {
    std::vector<int64_t> out;
    list([&] {
      size_t at = (skip_ws(), pos_);
      std::string_view w = word();
      auto it = std::find(kDistribWords.begin(), kDistribWords.end(), w);
      if (it == kDistribWords.end()) fail_at(at, "block, cyclic or none");
      out.push_back(it - kDistribWords.begin());
    });
    return out;
  }

  std::vector<int64_t> darg_list() {
    std::vector<int64_t> out;
    list([&] {
      skip_ws();
      size_t at = pos_;
      if (word() == "default") {
        out.push_back(kDefaultDarg);
      } else {
        pos_ = at;
        out.push_back(integer());
      }
    });
    return out;
  }

  Spec parse_type() {
    skip_ws();
    size_t at = pos_;
    std::string_view w = word();
    if (w.empty()) fail("a type");
    Spec spec;
    auto kw = std::find_if(kKeywords.begin(), kKeywords.end(),
                           [&](const Keyword& k) { return k.word == w; });
    if (kw == kKeywords.end()) {
      MPI_Datatype ignored;
      if (!lookup_named(w, &ignored)) fail_at(at, "a type name or constructor");
      spec.name = std::string(w);
      return spec;
    }
    spec.kind = kw->kind;
    expect('(');
    auto child = [&] { spec.children.push_back(parse_type()); };
    auto param = [&] { spec.params.push_back(integer()); };
    auto ints = [&] { spec.lists.push_back(int_list()); };
    auto comma = [&] { expect(','); };
    switch (spec.kind) {
      case Kind::kContiguous:
        param(), comma(), child();
        break;
      case Kind::kVector:
      case Kind::kHvector:
        param(), comma(), param(), comma(), param(), comma(), child();
        break;
      case Kind::kIndexed:
      case Kind::kHindexed:
        ints(), comma(), ints(), comma(), child();
        break;
      case Kind::kIndexedBlock:
      case Kind::kHindexedBlock:
        param(), comma(), ints(), comma(), child();
        break;
      case Kind::kStruct:
        ints(), comma(), ints(), comma(), list(child);
        break;
      case Kind::kSubarray:
        spec.params.push_back(order());
        comma(), ints(), comma(), ints(), comma(), ints(), comma(), child();
        break;
      case Kind::kDarray:
        param(), comma(), param(), comma();
        spec.params.push_back(order());
        comma(), ints(), comma();
        spec.lists.push_back(distrib_list());
        comma();
        spec.lists.push_back(darg_list());
        comma(), ints(), comma(), child();
        break;
      case Kind::kResized:
        param(), comma(), param(), comma(), child();
        break;
      case Kind::kDup:
        child();
        break;
      case Kind::kNamed:
        break;
    }
    expect(')');
    return spec;
  }
};

// ---- formatting ----

void append_list(std::string& out, const std::vector<int64_t>& values, auto&& item) {
  out += '[';
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ',';
    item(values[i]);
  }
  out += ']';
}

void format_into(std::string& out, const Spec& spec) {
  if (spec.kind == Kind::kNamed) {
    out += spec.name;
    return;
  }
  out += keyword_of(spec.kind);
  out += '(';
  bool first = true;
  auto sep = [&] {
    if (!first) out += ',';
    first = false;
  };
  auto num = [&](int64_t v) { out += std::to_string(v); };
  auto ints = [&](const std::vector<int64_t>& v) { sep(), append_list(out, v, num); };
  auto order = [&](int64_t v) { sep(), out += v == kOrderFortran ? 'F' : 'C'; };
  // Scalars, then lists, then children is grammar order for every kind except the symbolic
  // tokens of subarray/darray and struct's bracketed member list.
  if (spec.kind == Kind::kSubarray) {
    order(spec.params.at(0));
    for (const auto& l : spec.lists) ints(l);
  } else if (spec.kind == Kind::kDarray) {
    sep(), num(spec.params.at(0));
    sep(), num(spec.params.at(1));
    order(spec.params.at(2));
    ints(spec.lists.at(0));
    sep();
    append_list(out, spec.lists.at(1), [&](int64_t d) {
      out += d >= 0 && d < 3 ? kDistribWords[d] : std::string_view("?");
    });
    sep();
    append_list(out, spec.lists.at(2), [&](int64_t d) {
      if (d == kDefaultDarg) {
        out += "default";
      } else {
        num(d);
      }
    });
    ints(spec.lists.at(3));
  } else {
    for (int64_t p : spec.params) sep(), num(p);
    for (const auto& l : spec.lists) ints(l);
  }
  if (spec.kind == Kind::kStruct) {
    sep();
    out += '[';
    for (size_t i = 0; i < spec.children.size(); ++i) {
      if (i) out += ',';
      format_into(out, spec.children[i]);
    }
    out += ']';
  } else {
    for (const auto& c : spec.children) sep(), format_into(out, c);
  }
  out += ')';
}

// ---- building ----

// Owns a datatype handle; frees it unless it is named.
class Owned {
 public:
  explicit Owned(MPI_Datatype t = MPI_DATATYPE_NULL) : t_(t) {}
  Owned(Owned&& o) noexcept : t_(std::exchange(o.t_, MPI_DATATYPE_NULL)) {}
  Owned& operator=(Owned&&) = delete;
  ~Owned() {
    if (t_ != MPI_DATATYPE_NULL && !is_named(t_)) MPI_Type_free(&t_);
  }
  MPI_Datatype get() const { return t_; }
  MPI_Datatype release() { return std::exchange(t_, MPI_DATATYPE_NULL); }

 private:
  MPI_Datatype t_;
};

[[noreturn]] void semantic(const std::string& what) { throw std::invalid_argument(what); }

void check(int rc, const char* fn) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) len = 0;
  throw std::runtime_error(std::string(fn) + " failed: " + std::string(msg, len));
}

int to_int(int64_t v, const char* what) {
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) {
    semantic(std::string(what) + " out of int range: " + std::to_string(v));
  }
  return static_cast<int>(v);
}

// Converted arrays keep capacity >= 1 so data() is never null for empty lists (some MPIs
// reject null array arguments even with count 0).
std::vector<int> ints_of(const std::vector<int64_t>& v, const char* what) {
  std::vector<int> out;
  out.reserve(std::max<size_t>(1, v.size()));
  for (int64_t x : v) out.push_back(to_int(x, what));
  return out;
}

#if MPI_VERSION >= 4
std::vector<MPI_Count> counts_of(const std::vector<int64_t>& v) { return {v.begin(), v.end()}; }
#endif

std::vector<MPI_Aint> aints_of(const std::vector<int64_t>& v) {
  std::vector<MPI_Aint> out;
  out.reserve(std::max<size_t>(1, v.size()));
  for (int64_t x : v) out.push_back(static_cast<MPI_Aint>(x));
  return out;
}

void expect_shape(const Spec& s, size_t params, size_t lists, size_t children) {
  if (s.params.size() != params || s.lists.size() != lists ||
      (s.kind != Kind::kStruct && s.children.size() != children)) {
    semantic(std::string("malformed ") + std::string(keyword_of(s.kind)) + " spec");
  }
}

void same_length(const std::vector<int64_t>& a, const std::vector<int64_t>& b, const char* kw) {
  if (a.size() != b.size()) {
    semantic(std::string(kw) + ": list lengths differ (" + std::to_string(a.size()) + " vs " +
             std::to_string(b.size()) + ")");
  }
}

#if MPI_VERSION >= 4
// The same type through the large-count constructors (MPI_Type_vector_c, ...), as mpi4py builds
// its types where the MPI has them: every count, blocklength, displacement, stride, size and
// bound an MPI_Count. `c` is the built child.
MPI_Datatype build_large(const Spec& s, MPI_Datatype c) {
  MPI_Datatype out = MPI_DATATYPE_NULL;
  const auto& p = s.params;
  const auto order = [](int64_t v) { return v == kOrderFortran ? MPI_ORDER_FORTRAN : MPI_ORDER_C; };
  switch (s.kind) {
    case Kind::kContiguous:
      check(MPI_Type_contiguous_c(p[0], c, &out), "MPI_Type_contiguous_c");
      break;
    case Kind::kVector:
      check(MPI_Type_vector_c(p[0], p[1], p[2], c, &out), "MPI_Type_vector_c");
      break;
    case Kind::kHvector:
      check(MPI_Type_create_hvector_c(p[0], p[1], p[2], c, &out), "MPI_Type_create_hvector_c");
      break;
    case Kind::kIndexed: {
      auto bl = counts_of(s.lists[0]);
      auto disp = counts_of(s.lists[1]);
      check(MPI_Type_indexed_c(static_cast<MPI_Count>(bl.size()), bl.data(), disp.data(), c, &out),
            "MPI_Type_indexed_c");
      break;
    }
    case Kind::kHindexed: {
      auto bl = counts_of(s.lists[0]);
      auto disp = counts_of(s.lists[1]);
      check(MPI_Type_create_hindexed_c(static_cast<MPI_Count>(bl.size()), bl.data(), disp.data(), c,
                                       &out),
            "MPI_Type_create_hindexed_c");
      break;
    }
    case Kind::kIndexedBlock:
    case Kind::kHindexedBlock: {  // the same signature: displacements in elements or bytes
      const bool bytes = s.kind == Kind::kHindexedBlock;
      auto disp = counts_of(s.lists[0]);
      check((bytes ? MPI_Type_create_hindexed_block_c : MPI_Type_create_indexed_block_c)(
                static_cast<MPI_Count>(disp.size()), p[0], disp.data(), c, &out),
            bytes ? "MPI_Type_create_hindexed_block_c" : "MPI_Type_create_indexed_block_c");
      break;
    }
    case Kind::kSubarray: {
      auto sizes = counts_of(s.lists[0]);
      auto subsizes = counts_of(s.lists[1]);
      auto starts = counts_of(s.lists[2]);
      check(MPI_Type_create_subarray_c(static_cast<int>(sizes.size()), sizes.data(),
                                       subsizes.data(), starts.data(), order(p[0]), c, &out),
            "MPI_Type_create_subarray_c");
      break;
    }
    case Kind::kDarray: {
      auto gsizes = counts_of(s.lists[0]);
      auto psizes = ints_of(s.lists[3], "psize");
      std::vector<int> distribs, dargs;
      for (size_t i = 0; i < gsizes.size(); ++i) {
        const int64_t d = s.lists[1][i];
        distribs.push_back(d == kDistribBlock    ? MPI_DISTRIBUTE_BLOCK
                           : d == kDistribCyclic ? MPI_DISTRIBUTE_CYCLIC
                                                 : MPI_DISTRIBUTE_NONE);
        const int64_t a = s.lists[2][i];
        dargs.push_back(a == kDefaultDarg ? MPI_DISTRIBUTE_DFLT_DARG : to_int(a, "darg"));
      }
      check(MPI_Type_create_darray_c(
                to_int(p[0], "size"), to_int(p[1], "rank"), static_cast<int>(gsizes.size()),
                gsizes.data(), distribs.data(), dargs.data(), psizes.data(), order(p[2]), c, &out),
            "MPI_Type_create_darray_c");
      break;
    }
    case Kind::kResized:
      check(MPI_Type_create_resized_c(c, p[0], p[1], &out), "MPI_Type_create_resized_c");
      break;
    case Kind::kDup:  // built by build_rec
    case Kind::kNamed:
    case Kind::kStruct:
      break;
  }
  return out;
}
#endif

Owned build_rec(const Spec& s) {
  if (s.kind == Kind::kNamed) {
    MPI_Datatype t;
    if (!lookup_named(s.name, &t)) semantic("unknown type name '" + s.name + "'");
    return Owned(t);
  }
  MPI_Datatype out = MPI_DATATYPE_NULL;
  const char* kw = keyword_of(s.kind).data();
  switch (s.kind) {
    case Kind::kStruct: {
      expect_shape(s, 0, 2, 0);
      same_length(s.lists[0], s.lists[1], kw);
      if (s.children.size() != s.lists[0].size()) semantic("struct: list lengths differ");
      std::vector<Owned> members;
      std::vector<MPI_Datatype> types;
      types.reserve(std::max<size_t>(1, s.children.size()));
      for (const auto& c : s.children) {
        members.push_back(build_rec(c));
        types.push_back(members.back().get());
      }
#if MPI_VERSION >= 4
      if (large_count_constructors()) {
        auto bl = counts_of(s.lists[0]);
        auto disp = counts_of(s.lists[1]);
        check(MPI_Type_create_struct_c(static_cast<MPI_Count>(bl.size()), bl.data(), disp.data(),
                                       types.data(), &out),
              "MPI_Type_create_struct_c");
        return Owned(out);
      }
#endif
      auto bl = ints_of(s.lists[0], "blocklength");
      auto disp = aints_of(s.lists[1]);
      check(MPI_Type_create_struct(static_cast<int>(bl.size()), bl.data(), disp.data(),
                                   types.data(), &out),
            "MPI_Type_create_struct");
      return Owned(out);
    }
    case Kind::kContiguous:
      expect_shape(s, 1, 0, 1);
      break;
    case Kind::kVector:
    case Kind::kHvector:
      expect_shape(s, 3, 0, 1);
      break;
    case Kind::kIndexed:
    case Kind::kHindexed:
      expect_shape(s, 0, 2, 1);
      same_length(s.lists[0], s.lists[1], kw);
      break;
    case Kind::kIndexedBlock:
    case Kind::kHindexedBlock:
      expect_shape(s, 1, 1, 1);
      break;
    case Kind::kSubarray:
      expect_shape(s, 1, 3, 1);
      same_length(s.lists[0], s.lists[1], kw);
      same_length(s.lists[0], s.lists[2], kw);
      if (s.lists[0].empty()) semantic("subarray: needs at least one dimension");
      break;
    case Kind::kDarray:
      expect_shape(s, 3, 4, 1);
      for (int i = 1; i < 4; ++i) same_length(s.lists[0], s.lists[i], kw);
      if (s.lists[0].empty()) semantic("darray: needs at least one dimension");
      break;
    case Kind::kResized:
      expect_shape(s, 2, 0, 1);
      break;
    case Kind::kDup:
      expect_shape(s, 0, 0, 1);
      break;
    case Kind::kNamed:
      break;
  }
  Owned child = build_rec(s.children[0]);
  MPI_Datatype c = child.get();
  const auto& p = s.params;
  if (s.kind == Kind::kDup) {
    check(MPI_Type_dup(c, &out), "MPI_Type_dup");
    return Owned(out);
  }
#if MPI_VERSION >= 4
  if (large_count_constructors()) return Owned(build_large(s, c));
#endif
  switch (s.kind) {
    case Kind::kContiguous:
      check(MPI_Type_contiguous(to_int(p[0], "count"), c, &out), "MPI_Type_contiguous");
      break;
    case Kind::kVector:
      check(MPI_Type_vector(to_int(p[0], "count"), to_int(p[1], "blocklength"),
                            to_int(p[2], "stride"), c, &out),
            "MPI_Type_vector");
      break;
    case Kind::kHvector:
      check(MPI_Type_create_hvector(to_int(p[0], "count"), to_int(p[1], "blocklength"),
                                    static_cast<MPI_Aint>(p[2]), c, &out),
            "MPI_Type_create_hvector");
      break;
    case Kind::kIndexed: {
      auto bl = ints_of(s.lists[0], "blocklength");
      auto disp = ints_of(s.lists[1], "displacement");
      check(MPI_Type_indexed(static_cast<int>(bl.size()), bl.data(), disp.data(), c, &out),
            "MPI_Type_indexed");
      break;
    }
    case Kind::kHindexed: {
      auto bl = ints_of(s.lists[0], "blocklength");
      auto disp = aints_of(s.lists[1]);
      check(MPI_Type_create_hindexed(static_cast<int>(bl.size()), bl.data(), disp.data(), c, &out),
            "MPI_Type_create_hindexed");
      break;
    }
    case Kind::kIndexedBlock: {
      auto disp = ints_of(s.lists[0], "displacement");
      check(MPI_Type_create_indexed_block(static_cast<int>(disp.size()),
                                          to_int(p[0], "blocklength"), disp.data(), c, &out),
            "MPI_Type_create_indexed_block");
      break;
    }
    case Kind::kHindexedBlock: {
      auto disp = aints_of(s.lists[0]);
      check(MPI_Type_create_hindexed_block(static_cast<int>(disp.size()),
                                           to_int(p[0], "blocklength"), disp.data(), c, &out),
            "MPI_Type_create_hindexed_block");
      break;
    }
    case Kind::kSubarray: {
      auto sizes = ints_of(s.lists[0], "size");
      auto subsizes = ints_of(s.lists[1], "subsize");
      auto starts = ints_of(s.lists[2], "start");
      int order = p[0] == kOrderFortran ? MPI_ORDER_FORTRAN : MPI_ORDER_C;
      check(MPI_Type_create_subarray(static_cast<int>(sizes.size()), sizes.data(), subsizes.data(),
                                     starts.data(), order, c, &out),
            "MPI_Type_create_subarray");
      break;
    }
    case Kind::kDarray: {
      auto gsizes = ints_of(s.lists[0], "gsize");
      auto psizes = ints_of(s.lists[3], "psize");
      std::vector<int> distribs, dargs;
      for (size_t i = 0; i < gsizes.size(); ++i) {
        switch (s.lists[1][i]) {
          case kDistribBlock:
            distribs.push_back(MPI_DISTRIBUTE_BLOCK);
            break;
          case kDistribCyclic:
            distribs.push_back(MPI_DISTRIBUTE_CYCLIC);
            break;
          case kDistribNone:
            distribs.push_back(MPI_DISTRIBUTE_NONE);
            break;
          default:
            semantic("darray: bad distribution value");
        }
        int64_t d = s.lists[2][i];
        dargs.push_back(d == kDefaultDarg ? MPI_DISTRIBUTE_DFLT_DARG : to_int(d, "darg"));
      }
      int order = p[2] == kOrderFortran ? MPI_ORDER_FORTRAN : MPI_ORDER_C;
      check(MPI_Type_create_darray(to_int(p[0], "size"), to_int(p[1], "rank"),
                                   static_cast<int>(gsizes.size()), gsizes.data(), distribs.data(),
                                   dargs.data(), psizes.data(), order, c, &out),
            "MPI_Type_create_darray");
      break;
    }
    case Kind::kResized:
      check(MPI_Type_create_resized(c, static_cast<MPI_Aint>(p[0]), static_cast<MPI_Aint>(p[1]),
                                    &out),
            "MPI_Type_create_resized");
      break;
    case Kind::kDup:  // built above
    case Kind::kNamed:
    case Kind::kStruct:
      break;
  }
  return Owned(out);
}

}  // namespace

const std::vector<NamedType>& named_types() {
  // Built at first use: Open MPI's handles are addresses, not constant expressions.
  static const std::vector<NamedType> table = {
    {"byte", MPI_BYTE},
    {"char", MPI_CHAR},
    {"signed_char", MPI_SIGNED_CHAR},
    {"unsigned_char", MPI_UNSIGNED_CHAR},
    {"short", MPI_SHORT},
    {"unsigned_short", MPI_UNSIGNED_SHORT},
    {"int", MPI_INT},
    {"unsigned", MPI_UNSIGNED},
    {"long", MPI_LONG},
    {"unsigned_long", MPI_UNSIGNED_LONG},
    {"long_long", MPI_LONG_LONG},
    {"unsigned_long_long", MPI_UNSIGNED_LONG_LONG},
    {"float", MPI_FLOAT},
    {"double", MPI_DOUBLE},
    {"long_double", MPI_LONG_DOUBLE},
    {"wchar", MPI_WCHAR},
    {"c_bool", MPI_C_BOOL},
    {"int8_t", MPI_INT8_T},
    {"int16_t", MPI_INT16_T},
    {"int32_t", MPI_INT32_T},
    {"int64_t", MPI_INT64_T},
    {"uint8_t", MPI_UINT8_T},
    {"uint16_t", MPI_UINT16_T},
    {"uint32_t", MPI_UINT32_T},
    {"uint64_t", MPI_UINT64_T},
    {"aint", MPI_AINT},
    {"offset", MPI_OFFSET},
    {"count", MPI_COUNT},
    {"packed", MPI_PACKED},
    {"float_int", MPI_FLOAT_INT},
    {"double_int", MPI_DOUBLE_INT},
    {"long_int", MPI_LONG_INT},
    {"short_int", MPI_SHORT_INT},
    {"2int", MPI_2INT},
    {"long_double_int", MPI_LONG_DOUBLE_INT},
    {"c_float_complex", MPI_C_FLOAT_COMPLEX},
    {"c_double_complex", MPI_C_DOUBLE_COMPLEX},
#if STRIDER_HAVE_MPI_LB
    {"lb", MPI_LB},
    {"ub", MPI_UB},
#endif
  };
  return table;
}

bool lookup_named(std::string_view name, MPI_Datatype* type) {
  for (const auto& n : named_types()) {
    if (n.name == name) {
      *type = n.type;
      return true;
    }
  }
  return false;
}

Spec parse(std::string_view text) { return Parser(text).parse_all(); }

std::string format(const Spec& spec) {
  std::string out;
  format_into(out, spec);
  return out;
}

MPI_Datatype build(const Spec& spec) { return build_rec(spec).release(); }

MPI_Datatype build_type(std::string_view text) { return build(parse(text)); }

bool is_named(MPI_Datatype type) {
  int ni = 0, na = 0, nd = 0, combiner = 0;
  if (MPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) != MPI_SUCCESS) return false;
  return combiner == MPI_COMBINER_NAMED;
}

}  // namespace strider::typespec
