# Strider's front door. `make demo` and `make test` set everything up (packages via apt-get
# when run as root, configure, build) and then run the demo or every test, for each MPI.
#
#   MPIS=openmpi mpich   implementations to build and test (one build tree each, build/<mpi>)
#   CUDA=AUTO|ON|OFF     compile the CUDA sources (AUTO: when nvcc is found)
#   REQUIRE_ALL_MPIS=1   fail instead of skipping an MPI whose packages cannot be installed
#   CTEST_ARGS=...       extra ctest arguments, e.g. -L unit or -R pack
MPIS ?= openmpi mpich
CUDA ?= AUTO
BUILD ?= build
JOBS ?= $(shell nproc)
REQUIRE_ALL_MPIS ?= 0
CTEST_ARGS ?=

.PHONY: help deps build demo test bench install clean format
help:
	@sed -n '1,9p' Makefile | sed 's/^# \{0,1\}//'
	@echo "targets: demo test build bench install format clean"

# The MPIs whose packages are present (after trying to install them); an MPI that cannot be
# installed here (e.g. MPICH on a machine without a package registry) is skipped with a note.
define available_mpis
$(foreach m,$(MPIS),$(if $(shell scripts/install-deps.sh $(m) >&2 && echo ok),$(m),$(if $(filter 1,$(REQUIRE_ALL_MPIS)),$(error $(m) packages missing and REQUIRE_ALL_MPIS=1),$(warning skipping $(m): its packages are not installed and could not be installed here))))
endef

deps:
	@scripts/install-deps.sh $(MPIS)

$(BUILD)/%/build.ninja:
	cmake -S . -B $(BUILD)/$* -G Ninja -DSTRIDER_MPI=$* -DSTRIDER_CUDA=$(CUDA)

build-%: $(BUILD)/%/build.ninja
	cmake --build $(BUILD)/$* -j $(JOBS)

build:
	@$(MAKE) --no-print-directory $(addprefix build-,$(strip $(call available_mpis)))

demo:
	@set -e; mpi=$(firstword $(strip $(call available_mpis))); \
	[ -n "$$mpi" ] || { echo "no MPI available"; exit 1; }; \
	$(MAKE) --no-print-directory build-$$mpi; \
	scripts/run-demo.sh $(BUILD)/$$mpi

test:
	@set -e; mpis="$(strip $(call available_mpis))"; \
	[ -n "$$mpis" ] || { echo "no MPI available"; exit 1; }; \
	for m in $$mpis; do $(MAKE) --no-print-directory build-$$m; done; \
	for m in $$mpis; do \
	  echo "=== tests against $$m ==="; \
	  ctest --test-dir $(BUILD)/$$m --output-on-failure -j 2 $(CTEST_ARGS) || exit 1; \
	done; \
	echo "=== all tests passed for: $$mpis ==="

bench:
	@set -e; for m in $(strip $(call available_mpis)); do \
	  $(MAKE) --no-print-directory build-$$m; \
	  bench/run_host_benchmarks.sh $(BUILD)/$$m bench/results/$$(date +%F)-cpu; \
	done

install:
	@mpi=$(firstword $(strip $(call available_mpis))); \
	$(MAKE) --no-print-directory build-$$mpi && cmake --install $(BUILD)/$$mpi $(if $(PREFIX),--prefix $(PREFIX))

format:
	find src include tools tests bench examples \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' -o -name '*.c' \) | xargs clang-format -i

clean:
	rm -rf $(BUILD)
