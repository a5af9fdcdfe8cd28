# Strider's front door. `make demo` and `make test` set everything up (packages via apt-get
# when run as root, configure, build) and then run the demo or every test, for each MPI.
# Required: a C++ compiler, CMake, make and an MPI; parts needing a missing optional package
# (GoogleTest, CLI11, nlohmann-json, ...) are left out with a note (scripts/install-deps.sh).
#
#   MPIS=openmpi mpich mpich-wheel mpich-abi
#                        implementations to build and test (one build tree each, build/<mpi>);
#                        mpich-wheel / mpich-abi: MPICH 5 from PyPI in .venv-mpi/, its own ABI /
#                        the MPI-5 standard ABI (skipped with a note when PyPI is unreachable)
#   CUDA=AUTO|ON|OFF     compile the CUDA sources (AUTO: when nvcc is found)
#   WHEEL_CUDA=OFF       the same for the two wheel builds (off: CI time; GPU paths are built
#                        and tested against Debian's MPIs)
#   REQUIRE_ALL_MPIS=1   fail instead of skipping an MPI whose packages cannot be installed
#   INSTALL_DEPS=0       never try apt-get, only report what is missing
#   CTEST_ARGS=...       extra ctest arguments, e.g. -L unit or -R pack
#   CMAKE_ARGS=...       extra configure arguments, e.g. -DSTRIDER_GTEST_SOURCE_DIR=...
MPIS ?= openmpi mpich mpich-wheel mpich-abi
CUDA ?= AUTO
WHEEL_CUDA ?= OFF
BUILD ?= build
JOBS ?= $(shell nproc)
REQUIRE_ALL_MPIS ?= 0
INSTALL_DEPS ?= 1
CTEST_ARGS ?=
CMAKE_ARGS ?=
GENERATOR ?= $(if $(shell command -v ninja),Ninja,Unix Makefiles)
CLANG_FORMAT ?= clang-format
FORMAT_FILES = find src include tools tests bench examples \( -name '*.cpp' -o -name '*.hpp' \
  -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' -o -name '*.c' \)

.PHONY: help deps build demo test gpu-check bench install clean format format-check
help:
	@sed -n '1,16p' Makefile | sed 's/^# \{0,1\}//'
	@echo "targets: demo test build gpu-check bench install format format-check clean"

# In a recipe's shell: checks (and installs) packages once, then $$mpis holds the usable MPIs
# and $$skipped one "mpi: why" line per MPI left out.
define select_mpis
report=$$(INSTALL_DEPS=$(INSTALL_DEPS) REQUIRE_ALL_MPIS=$(REQUIRE_ALL_MPIS) \
  scripts/install-deps.sh --report $(MPIS)) || \
  { echo "missing required packages$(if $(filter 1,$(REQUIRE_ALL_MPIS)), or an MPI with REQUIRE_ALL_MPIS=1)" >&2; exit 1; }; \
mpis=$$(printf '%s\n' "$$report" | sed -n 's/^ok //p' | xargs); \
skipped=$$(printf '%s\n' "$$report" | sed -n 's/^skip //p'); \
[ -n "$$mpis" ] || { echo "no MPI available: $$skipped" >&2; exit 1; }
endef

deps:
	@INSTALL_DEPS=$(INSTALL_DEPS) scripts/install-deps.sh $(MPIS)

# Kept: reached through build-%, make would otherwise delete it as an intermediate file.
.PRECIOUS: $(BUILD)/%/CMakeCache.txt
$(BUILD)/%/CMakeCache.txt:
	cmake -S . -B $(BUILD)/$* -G "$(GENERATOR)" -DSTRIDER_MPI=$* \
	  -DSTRIDER_CUDA=$(if $(filter mpich-wheel mpich-abi,$*),$(WHEEL_CUDA),$(CUDA)) $(CMAKE_ARGS)

build-%: $(BUILD)/%/CMakeCache.txt
	cmake --build $(BUILD)/$* -j $(JOBS)

build:
	@set -e; $(select_mpis); for m in $$mpis; do $(MAKE) --no-print-directory build-$$m; done

# Only what the demo needs: the library, examples/halo3d and strider-explain.
demo:
	@set -e; $(select_mpis); mpi=$${mpis%% *}; \
	$(MAKE) --no-print-directory $(BUILD)/$$mpi/CMakeCache.txt; \
	cmake --build $(BUILD)/$$mpi -j $(JOBS) --target strider halo3d strider-explain; \
	scripts/run-demo.sh $(BUILD)/$$mpi

test:
	@set -e; $(select_mpis); \
	for m in $$mpis; do $(MAKE) --no-print-directory build-$$m; done; \
	SKIPPED_MPIS="$$skipped" CTEST_ARGS="$(CTEST_ARGS)" scripts/run-tests.sh $(BUILD) $$mpis

# The GPU suite on a machine with a GPU (build, every test, benchmarks; see README).
gpu-check:
	scripts/gpu-check.sh $(GPU_CHECK_ARGS)

bench:
	@set -e; $(select_mpis); for m in $$mpis; do \
	  $(MAKE) --no-print-directory build-$$m; \
	  bench/run_host_benchmarks.sh $(BUILD)/$$m bench/results/$$(date +%F)-cpu; \
	done

install:
	@set -e; $(select_mpis); mpi=$${mpis%% *}; \
	$(MAKE) --no-print-directory build-$$mpi && cmake --install $(BUILD)/$$mpi $(if $(PREFIX),--prefix $(PREFIX))

format:
	$(FORMAT_FILES) | xargs $(CLANG_FORMAT) -i

# What CI checks: the same files, unchanged by clang-format.
format-check:
	@$(FORMAT_FILES) | xargs $(CLANG_FORMAT) --dry-run -Werror && echo "format-check: clean"

clean:
	rm -rf $(BUILD)
