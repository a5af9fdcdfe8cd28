// Tests for the type text parser/formatter/builder and the random type generator. Runs as a
// singleton (MPI_Init in a global test environment). STRIDER_TYPESPEC_RANDOM_COUNT and
// STRIDER_TYPESPEC_RANDOM_SEED set how many random types to check and the seed.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "typespec/random_type.hpp"
#include "typespec/type_spec.hpp"

namespace ts = strider::typespec;

namespace {

struct TypeFacts {
  int size;
  MPI_Aint lb, extent, true_lb, true_extent;
};

TypeFacts facts(MPI_Datatype t) {
  TypeFacts f{};
  EXPECT_EQ(MPI_Type_size(t, &f.size), MPI_SUCCESS);
  EXPECT_EQ(MPI_Type_get_extent(t, &f.lb, &f.extent), MPI_SUCCESS);
  EXPECT_EQ(MPI_Type_get_true_extent(t, &f.true_lb, &f.true_extent), MPI_SUCCESS);
  return f;
}

void free_type(MPI_Datatype& t) {
  if (!ts::is_named(t)) {
    ASSERT_EQ(MPI_Type_free(&t), MPI_SUCCESS);
  }
}

// Source offset (relative to the type's origin) of every packed byte, found by packing a
// buffer whose bytes hold one byte of their own offset at a time (3 passes: 24-bit offsets).
// Each pass runs twice, the second time with inverted bytes: a packed byte that does not follow
// the inversion was not copied from the buffer (MPICH packs only the 10 value bytes of an x87
// long double) and reads as -1.
std::vector<int64_t> packed_offsets(MPI_Datatype t, const TypeFacts& f) {
  std::vector<int64_t> offsets(f.size, 0);
  if (f.size == 0) return offsets;
  std::vector<unsigned char> buf(f.true_extent), packed(f.size), inverted(f.size);
  auto pack = [&](int shift, unsigned char flip, std::vector<unsigned char>& out) {
    for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<unsigned char>(i >> shift) ^ flip;
    int pos = 0;
    EXPECT_EQ(MPI_Pack(buf.data() - f.true_lb, 1, t, out.data(), f.size, &pos, MPI_COMM_SELF),
              MPI_SUCCESS);
    EXPECT_EQ(pos, f.size);
  };
  for (int shift = 0; shift < 24; shift += 8) {
    pack(shift, 0, packed);
    pack(shift, 0xff, inverted);
    for (int i = 0; i < f.size; ++i) {
      if ((packed[i] ^ inverted[i]) != 0xff) offsets[i] = -1;
      if (offsets[i] >= 0) offsets[i] |= int64_t{packed[i]} << shift;
    }
  }
  for (auto& o : offsets) {
    if (o >= 0) o += f.true_lb;
  }
  return offsets;
}

// Compares MPI's packed offsets with the model's; uncopied bytes are accepted only in types
// that contain long doubles.
void expect_same_offsets(std::vector<int64_t> packed, const std::vector<int64_t>& model,
                         const std::string& text) {
  ASSERT_EQ(packed.size(), model.size());
  bool has_long_double = text.find("long_double") != std::string::npos;
  for (size_t i = 0; i < packed.size(); ++i) {
    if (packed[i] == -1 && has_long_double) packed[i] = model[i];
  }
  EXPECT_EQ(packed, model);
}

std::vector<int64_t> model_offsets(const ts::Layout& l) {
  std::vector<int64_t> out;
  for (const auto& r : l.runs) {
    for (int64_t b = 0; b < r.length; ++b) out.push_back(r.offset + b);
  }
  return out;
}

// A datatype handle as an integer: MPI_Type_c2f's MPI_Fint, or under the MPI-5 standard ABI
// (mpi_abi.h, which has no MPI_Fint) MPI_Type_toint's int.
#if defined(MPI_ABI_VERSION)
using FortranHandle = int;
FortranHandle handle_as_int(MPI_Datatype t) { return MPI_Type_toint(t); }
#else
using FortranHandle = MPI_Fint;
FortranHandle handle_as_int(MPI_Datatype t) { return MPI_Type_c2f(t); }
#endif

// Slot of a fresh derived type: the index bits of an MPICH handle, which only grow far if
// handles leak (MPICH also warns about leaked objects at finalize). Open MPI hands out Fortran
// indices lazily, so there this check is weak.
FortranHandle fresh_handle_index() {
  MPI_Datatype t;
  MPI_Type_dup(MPI_INT, &t);
  FortranHandle index = handle_as_int(t) & 0x03ffffff;
  MPI_Type_free(&t);
  return index;
}

}  // namespace

TEST(TypeSpecParse, RoundTripNormalizes) {
  const std::pair<std::string, std::string> cases[] = {
      {"int", "int"},
      {" 2int ", "2int"},
      {"contiguous( 3 , double )", "contiguous(3,double)"},
      {"vector(3, 1, -4, byte)", "vector(3,1,-4,byte)"},
      {"hvector(4,1,1,vector(3,1,4,byte))", "hvector(4,1,1,vector(3,1,4,byte))"},
      {"indexed([2, 0, 1], [0, 5, -3], short_int)", "indexed([2,0,1],[0,5,-3],short_int)"},
      {"hindexed([],[],int)", "hindexed([],[],int)"},
      {"indexed_block(2,[1,7],float_int)", "indexed_block(2,[1,7],float_int)"},
      {"hindexed_block(1,[-8],long_double_int)", "hindexed_block(1,[-8],long_double_int)"},
      {"struct([1,2],[0,8],[int,contiguous(2,float)])",
       "struct([1,2],[0,8],[int,contiguous(2,float)])"},
      {"struct([],[],[])", "struct([],[],[])"},
      {"subarray(F,[4,3],[1,2],[2,1],int)", "subarray(F,[4,3],[1,2],[2,1],int)"},
      {"darray(4, 1, C, [5, 6], [block, cyclic], [default, 2], [2, 2], double)",
       "darray(4,1,C,[5,6],[block,cyclic],[default,2],[2,2],double)"},
      {"resized(-8, 32, dup(c_double_complex))", "resized(-8,32,dup(c_double_complex))"},
      {"\tdup(\nunsigned_long_long)\n", "dup(unsigned_long_long)"},
  };
  for (const auto& [in, want] : cases) {
    EXPECT_EQ(ts::format(ts::parse(in)), want) << in;
    EXPECT_EQ(ts::parse(want), ts::parse(in)) << in;
  }
}

TEST(TypeSpecParse, SyntaxErrorsReportPosition) {
  const std::pair<std::string, size_t> cases[] = {
    {"", 0},
    {"foo", 0},
    {"contiguous", 10},
    {"contiguous(3 int)", 13},
    {"contiguous(x,int)", 11},
    {"vector(1,2,3)", 12},
    {"indexed([1,2,],[0,1],int)", 13},
    {"indexed([1 2],[0,1],int)", 11},
    {"subarray(X,[1],[1],[0],int)", 9},
    {"darray(1,0,C,[1],[blocky],[default],[1],int)", 18},
    {"darray(1,0,C,[1],[block],[dflt],[1],int)", 26},
    {"int int", 4},
    {"dup(int))", 8},
    {"contiguous(99999999999999999999,int)", 11},
    {"contiguous(3a,int)", 11},
    {"vector(1,--2,1,int)", 9},
#if !STRIDER_HAVE_MPI_LB
    {"struct([1],[0],[lb])", 16},
#endif
  };
  for (const auto& [in, pos] : cases) {
    try {
      ts::parse(in);
      ADD_FAILURE() << "no error for '" << in << "'";
    } catch (const ts::ParseError& e) {
      EXPECT_EQ(e.position, pos) << in << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("column " + std::to_string(pos + 1)), std::string::npos)
          << e.what();
    }
  }
}

TEST(TypeSpecBuild, SemanticErrors) {
  const FortranHandle handle_index = fresh_handle_index();
  EXPECT_THROW(ts::build_type("indexed([1,2],[0],int)"), std::invalid_argument);
  EXPECT_THROW(ts::build_type("struct([1],[0],[int,int])"), std::invalid_argument);
  EXPECT_THROW(ts::build_type("subarray(C,[4],[1,1],[0],int)"), std::invalid_argument);
  EXPECT_THROW(ts::build_type("subarray(C,[],[],[],int)"), std::invalid_argument);
  EXPECT_THROW(ts::build_type("darray(2,0,C,[4],[block],[default,1],[2],int)"),
               std::invalid_argument);
  EXPECT_THROW(ts::build_type("contiguous(4294967296,int)"), std::invalid_argument);
  // Rejected by MPI itself (MPI_ERRORS_RETURN is set in main).
  EXPECT_THROW(ts::build_type("contiguous(-1,int)"), std::runtime_error);
  EXPECT_THROW(ts::build_type("darray(2,2,C,[4],[block],[default],[2],int)"), std::runtime_error);
  EXPECT_THROW(ts::build_type("darray(2,0,C,[5],[block],[2],[2],int)"), std::runtime_error);
  // Failures deep inside free what was built so far.
  EXPECT_THROW(ts::build_type("struct([1,1],[0,8],[vector(2,1,3,int),contiguous(-1,int)])"),
               std::runtime_error);
  EXPECT_THROW(ts::build_type("resized(0,8,contiguous(2,indexed([1],[0,1],int)))"),
               std::invalid_argument);
  EXPECT_LE(fresh_handle_index(), handle_index + 64) << "datatype handles leaked";
}

TEST(TypeSpecBuild, SizesAndExtents) {
  struct Case {
    const char* text;
    int size;
    MPI_Aint lb, extent, true_lb, true_extent;
  };
  const Case cases[] = {
    {"int", 4, 0, 4, 0, 4},
    {"short_int", 6, 0, 8, 0, 8},
    {"long_double_int", 20, 0, 32, 0, 20},
    {"contiguous(3,double)", 24, 0, 24, 0, 24},
    {"vector(3,2,4,int)", 24, 0, 40, 0, 40},
    {"vector(3,1,-2,int)", 12, -16, 20, -16, 20},
    {"hvector(4,1,1,vector(3,1,4,byte))", 12, 0, 12, 0, 12},
    {"indexed([2,1],[5,0],short)", 6, 0, 14, 0, 14},
    {"hindexed([1,0,1],[-8,100,8],int)", 8, -8, 20, -8, 20},
    {"indexed_block(2,[1,4],float)", 16, 4, 20, 4, 20},
    {"struct([1,1],[0,8],[double,char])", 9, 0, 16, 0, 9},
    {"struct([2],[4],[2int])", 16, 4, 16, 4, 16},
    {"subarray(C,[4,3],[1,2],[2,1],int)", 8, 0, 48, 28, 8},
    {"subarray(F,[4,3],[1,2],[2,1],int)", 8, 0, 48, 24, 20},
    {"darray(4,1,C,[8],[block],[default],[4],int)", 8, 0, 32, 8, 8},
    {"darray(2,1,C,[8],[cyclic],[default],[2],int)", 16, 0, 32, 4, 28},
    {"resized(-4,16,int)", 4, -4, 16, 0, 4},
    {"contiguous(2,resized(-4,16,int))", 8, -4, 32, 0, 20},
    {"dup(float_int)", 8, 0, 8, 0, 8},
    {"contiguous(0,int)", 0, 0, 0, 0, 0},
#if STRIDER_HAVE_MPI_LB
    {"struct([1,1,1],[-4,2,32],[lb,double,ub])", 8, -4, 36, 2, 8},
#endif
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    MPI_Datatype t = ts::build_type(c.text);
    ASSERT_EQ(MPI_Type_commit(&t), MPI_SUCCESS);
    TypeFacts f = facts(t);
    EXPECT_EQ(f.size, c.size);
    EXPECT_EQ(f.lb, c.lb);
    EXPECT_EQ(f.extent, c.extent);
    EXPECT_EQ(f.true_lb, c.true_lb);
    EXPECT_EQ(f.true_extent, c.true_extent);
    auto l = ts::layout_of(ts::parse(c.text));
    ASSERT_TRUE(l.has_value());
    EXPECT_EQ(l->size, c.size);
    if (l->bounds_portable) {
      EXPECT_EQ(l->lb(), c.lb);
      EXPECT_EQ(l->extent(), c.extent);
    }
    if (c.size > 0) {
      expect_same_offsets(packed_offsets(t, f), model_offsets(*l), c.text);
    }
    free_type(t);
  }
}

TEST(TypeSpecBuild, NamedTypesAreNotFreed) {
  for (const auto& n : ts::named_types()) {
    MPI_Datatype t = ts::build_type(n.name);
    EXPECT_EQ(t, n.type);
    EXPECT_TRUE(ts::is_named(t));
  }
  MPI_Datatype t = ts::build_type("dup(int)");
  EXPECT_FALSE(ts::is_named(t));
  free_type(t);
}

TEST(RandomType, DeterministicAndCanonical) {
  ts::RandomTypeOptions opts;
  std::mt19937_64 a(42), b(42);
  for (int i = 0; i < 200; ++i) {
    std::string s = ts::random_type(a, opts);
    EXPECT_EQ(s, ts::random_type(b, opts));
    EXPECT_EQ(ts::format(ts::parse(s)), s);
  }
}

TEST(RandomType, CoversConstructors) {
  ts::RandomTypeOptions opts;
  std::mt19937_64 rng(7);
  std::string all;
  for (int i = 0; i < 2000; ++i) all += ts::random_type(rng, opts) + "\n";
  for (const char* word : {"contiguous(",
                           "vector(",
                           "hvector(",
                           "indexed(",
                           "hindexed(",
                           "indexed_block(",
                           "hindexed_block(",
                           "struct(",
                           "subarray(C",
                           "subarray(F",
                           "darray(",
                           "resized(-",
                           "dup(",
                           "short_int",
                           "float_int",
                           "long_double_int",
                           "2int",
                           "block",
                           "cyclic",
                           "none",
                           "default",
                           ",0,",
                           "[0,",
                           ",-"}) {
    EXPECT_NE(all.find(word), std::string::npos) << word;
  }
#if STRIDER_HAVE_MPI_LB
  EXPECT_NE(all.find(",lb"), std::string::npos);
  EXPECT_NE(all.find(",ub"), std::string::npos);
#endif
}

// Every generated type builds, commits, and matches the model byte for byte.
void check_random_types(const ts::RandomTypeOptions& opts, uint64_t seed, int count) {
  const FortranHandle handle_index = fresh_handle_index();
  std::mt19937_64 rng(seed);
  for (int i = 0; i < count; ++i) {
    std::string text = ts::random_type(rng, opts);
    SCOPED_TRACE(text);
    auto l = ts::layout_of(ts::parse(text));
    ASSERT_TRUE(l.has_value());
    ASSERT_TRUE(l->portable && l->bounds_portable);
    if (!opts.allow_overlap) {
      ASSERT_FALSE(ts::has_overlap(*l));
      if (opts.count_safe) {
        ASSERT_TRUE(ts::is_count_safe(*l));
      }
    }
    ASSERT_LE(l->size, opts.max_size_bytes);
    ASSERT_LE(l->true_extent(), opts.max_extent_bytes);
    ASSERT_LE(l->extent(), opts.max_extent_bytes);
    MPI_Datatype t = ts::build_type(text);
    ASSERT_EQ(MPI_Type_commit(&t), MPI_SUCCESS);
    TypeFacts f = facts(t);
    EXPECT_EQ(f.size, l->size);
    EXPECT_EQ(f.lb, l->lb());
    EXPECT_EQ(f.extent, l->extent());
    EXPECT_EQ(f.true_lb, l->true_lb);
    EXPECT_EQ(f.true_extent, l->true_extent());
    if (f.size > 0 && f.true_extent == l->true_extent()) {
      expect_same_offsets(packed_offsets(t, f), model_offsets(*l), text);
    }
    free_type(t);
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_LE(fresh_handle_index(), handle_index + 64) << "datatype handles leaked";
}

TEST(RandomType, BuildsAndMatchesModel) {
  const char* env_count = std::getenv("STRIDER_TYPESPEC_RANDOM_COUNT");
  const char* env_seed = std::getenv("STRIDER_TYPESPEC_RANDOM_SEED");
  check_random_types({}, env_seed ? std::strtoull(env_seed, nullptr, 10) : 12345,
                     env_count ? std::atoi(env_count) : 2000);
}

TEST(RandomType, OtherOptions) {
  ts::RandomTypeOptions deep;
  deep.max_depth = 7;
  ts::RandomTypeOptions flat;
  flat.max_depth = 1;
  flat.allow_negative_strides = false;
  flat.allow_darray = false;
  flat.allow_lb_ub_markers = false;
  ts::RandomTypeOptions loose;
  loose.allow_overlap = true;
  loose.max_size_bytes = 256;
  loose.max_extent_bytes = 1024;
  ts::RandomTypeOptions single;
  single.count_safe = false;
  int seed = 1;
  for (const auto& opts : {deep, flat, loose, single}) {
    SCOPED_TRACE(seed);
    check_random_types(opts, seed++, 1000);
  }
  // No option set may leave the generator without output.
  std::mt19937_64 rng(3);
  for (int i = 0; i < 200; ++i) {
    std::string s = ts::random_type(rng, flat);
    EXPECT_LE(ts::format(ts::parse(s)).size(), s.size());
    EXPECT_EQ(s.find("darray"), std::string::npos);
    EXPECT_EQ(s.find(",-"), std::string::npos) << s;
  }
}

// MPI lives for the whole test program; works with GTest::gtest_main (no custom main).
class MpiEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) MPI_Init(nullptr, nullptr);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  }
  void TearDown() override { MPI_Finalize(); }
};

[[maybe_unused]] const auto* const kMpiEnvironment =
    ::testing::AddGlobalTestEnvironment(new MpiEnvironment);
