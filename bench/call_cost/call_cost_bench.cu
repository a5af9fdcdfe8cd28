// bench/call_cost: where the fixed cost of one GPU MPI_Pack goes. Times, in one process and run,
// the parts a pack call of a small device object is made of (a bare launch + sync on each kind
// of stream and with each way of waiting, kernel parameter size, pointer classification, device
// queries, a mutex) beside Strider's MPI_Pack / MPI_Unpack of the same object and a
// cudaMemcpyAsync + sync of the same bytes. Median of many repetitions, random data.
// Run with LD_PRELOAD=libstrider.so for the Strider rows (without it they time the MPI).
//   --sched auto|spin|yield|blocking   cudaSetDeviceFlags before the context exists
#include <cuda.h>
#include <cuda_runtime.h>
#include <mpi.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "../common/cuda_check.hpp"

namespace {

double now_us() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Median of `reps` timed calls of f after a warm-up; `per` divides each sample (loops of `per`).
double median_us(const std::function<void()>& f, int reps, int per = 1) {
  for (int i = 0; i < 20; ++i) f();
  std::vector<double> t(static_cast<std::size_t>(reps));
  for (double& x : t) {
    const double a = now_us();
    f();
    x = (now_us() - a) / per;
  }
  std::nth_element(t.begin(), t.begin() + reps / 2, t.end());
  return t[reps / 2];
}

__global__ void empty_kernel() {}

template <int Bytes>
struct Params {
  unsigned char b[Bytes];
};
template <int Bytes>
__global__ void params_kernel(Params<Bytes> p, unsigned char* sink) {
  if (threadIdx.x == 0 && p.b[Bytes - 1] == 0xfe && p.b[0] == 0xfd) *sink = 1;
}

// A pack of `n` one-byte blocks `stride` apart: what a 1 KiB vector object costs the GPU itself.
__global__ void gather_kernel(const unsigned char* user, unsigned char* packed, int n, int stride) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) packed[i] = user[static_cast<long>(i) * stride];
}

// The kernel itself signals completion: it writes `seq` to mapped pinned memory after a system
// fence, and the host spins on that word instead of asking the driver.
__global__ void flag_kernel(volatile unsigned* flag, unsigned seq) {
  __threadfence_system();
  *flag = seq;
}

__global__ void fill_random(unsigned char* p, long n, unsigned long long seed) {
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long>(gridDim.x) * blockDim.x) {
    unsigned long long x = (static_cast<unsigned long long>(i) + seed) * 0x9E3779B97F4A7C15ull;
    x ^= x >> 29;
    p[i] = static_cast<unsigned char>((x * 0xBF58476D1CE4E5B9ull) >> 56);
  }
}

struct Row {
  std::string part, what;
  double us;
};

}  // namespace

int main(int argc, char** argv) {
  std::string sched = "auto", out = "call_cost.csv";
  int reps = 2000;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::printf(
          "usage: %s [--sched auto|spin|yield|blocking] [--reps N] [--out FILE]\n"
          "Times the parts of a small GPU MPI_Pack call (launch, sync, stream kind, parameter\n"
          "size, classification) beside MPI_Pack/MPI_Unpack itself; run with\n"
          "LD_PRELOAD=libstrider.so for Strider's figures. Writes CSV.\n",
          argv[0]);
      return 0;
    }
    if (a == "--sched" && i + 1 < argc) sched = argv[++i];
    if (a == "--reps" && i + 1 < argc) reps = std::max(11, std::atoi(argv[++i]));
    if (a == "--out" && i + 1 < argc) out = argv[++i];
  }
  unsigned flags = cudaDeviceScheduleAuto;
  if (sched == "spin") flags = cudaDeviceScheduleSpin;
  if (sched == "yield") flags = cudaDeviceScheduleYield;
  if (sched == "blocking") flags = cudaDeviceScheduleBlockingSync;
  MPI_Init(&argc, &argv);
  CUDA_CHECK(cudaSetDeviceFlags(flags));
  CUDA_CHECK(cudaFree(nullptr));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));

  cudaStream_t blocking, nonblocking;
  CUDA_CHECK(cudaStreamCreateWithFlags(&blocking, cudaStreamDefault));
  CUDA_CHECK(cudaStreamCreateWithFlags(&nonblocking, cudaStreamNonBlocking));
  cudaEvent_t event;
  CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  unsigned char *user, *packed, *sink;
  constexpr int kStride = 512, kBlocks = 1024;
  const long span = static_cast<long>(kBlocks) * kStride;
  const long big = 4l << 20;
  CUDA_CHECK(cudaMalloc(&user, std::max(span, big)));
  CUDA_CHECK(cudaMalloc(&packed, big));
  CUDA_CHECK(cudaMalloc(&sink, 1));
  fill_random<<<264, 256>>>(user, std::max(span, big), 2026);
  CUDA_CHECK(cudaDeviceSynchronize());

  std::vector<Row> rows;
  auto add = [&](const char* part, const char* what, double us) {
    rows.push_back({part, what, us});
  };
  auto spin_query = [](cudaStream_t s) {
    cudaError_t rc;
    while ((rc = cudaStreamQuery(s)) == cudaErrorNotReady) {
    }
    CUDA_CHECK(rc);
  };

  // Launch + sync by stream kind and way of waiting.
  add("launch+sync", "legacy stream, cudaStreamSynchronize",
      median_us(
          [&] {
            empty_kernel<<<1, 32>>>();
            CUDA_CHECK(cudaStreamSynchronize(0));
          },
          reps));
  add("launch+sync", "legacy stream, cudaDeviceSynchronize",
      median_us(
          [&] {
            empty_kernel<<<1, 32>>>();
            CUDA_CHECK(cudaDeviceSynchronize());
          },
          reps));
  add("launch+sync", "blocking stream, cudaStreamSynchronize",
      median_us(
          [&] {
            empty_kernel<<<1, 32, 0, blocking>>>();
            CUDA_CHECK(cudaStreamSynchronize(blocking));
          },
          reps));
  add("launch+sync", "non-blocking stream, cudaStreamSynchronize",
      median_us(
          [&] {
            empty_kernel<<<1, 32, 0, nonblocking>>>();
            CUDA_CHECK(cudaStreamSynchronize(nonblocking));
          },
          reps));
  add("launch+sync", "non-blocking stream, event record + cudaEventSynchronize",
      median_us(
          [&] {
            empty_kernel<<<1, 32, 0, nonblocking>>>();
            CUDA_CHECK(cudaEventRecord(event, nonblocking));
            CUDA_CHECK(cudaEventSynchronize(event));
          },
          reps));
  add("launch+sync", "non-blocking stream, spin on cudaStreamQuery",
      median_us(
          [&] {
            empty_kernel<<<1, 32, 0, nonblocking>>>();
            spin_query(nonblocking);
          },
          reps));
  add("launch+sync", "gather 1024 x 1 B kernel, non-blocking, cudaStreamSynchronize",
      median_us(
          [&] {
            gather_kernel<<<4, 256, 0, nonblocking>>>(user, packed, kBlocks, kStride);
            CUDA_CHECK(cudaStreamSynchronize(nonblocking));
          },
          reps));
  add("launch+sync", "gather 1024 x 1 B kernel, blocking, cudaStreamSynchronize",
      median_us(
          [&] {
            gather_kernel<<<4, 256, 0, blocking>>>(user, packed, kBlocks, kStride);
            CUDA_CHECK(cudaStreamSynchronize(blocking));
          },
          reps));

  unsigned* flag_host;
  unsigned* flag_device;
  CUDA_CHECK(cudaHostAlloc(&flag_host, sizeof(unsigned), cudaHostAllocMapped));
  CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&flag_device), flag_host, 0));
  unsigned seq = 0;
  *flag_host = 0;
  add("launch+sync", "non-blocking stream, kernel writes a mapped flag, host spins",
      median_us(
          [&] {
            flag_kernel<<<1, 1, 0, nonblocking>>>(flag_device, ++seq);
            while (*static_cast<volatile unsigned*>(flag_host) != seq) {
            }
          },
          reps));
  CUDA_CHECK(cudaStreamSynchronize(nonblocking));
  add("launch+sync", "non-blocking stream, spin on cudaEventQuery",
      median_us(
          [&] {
            empty_kernel<<<1, 32, 0, nonblocking>>>();
            CUDA_CHECK(cudaEventRecord(event, nonblocking));
            cudaError_t rc;
            while ((rc = cudaEventQuery(event)) == cudaErrorNotReady) {
            }
            CUDA_CHECK(rc);
          },
          reps));

  // CPU side of a launch (no sync inside the loop) by parameter size.
  constexpr int kLoop = 100;
  auto launches = [&](auto launch) {
    return median_us(
        [&] {
          for (int i = 0; i < kLoop; ++i) launch();
          CUDA_CHECK(cudaStreamSynchronize(nonblocking));
        },
        std::max(11, reps / 20), kLoop);
  };
  add("launch (CPU)", "empty kernel", launches([&] { empty_kernel<<<1, 32, 0, nonblocking>>>(); }));
  add("launch (CPU)", "64 B of parameters",
      launches([&] { params_kernel<64><<<1, 32, 0, nonblocking>>>(Params<64>{}, sink); }));
  add("launch (CPU)", "512 B of parameters",
      launches([&] { params_kernel<512><<<1, 32, 0, nonblocking>>>(Params<512>{}, sink); }));
  add("launch (CPU)", "2 KiB of parameters",
      launches([&] { params_kernel<2048><<<1, 32, 0, nonblocking>>>(Params<2048>{}, sink); }));
  add("launch+sync", "2 KiB of parameters, non-blocking, cudaStreamSynchronize",
      median_us(
          [&] {
            params_kernel<2048><<<1, 32, 0, nonblocking>>>(Params<2048>{}, sink);
            CUDA_CHECK(cudaStreamSynchronize(nonblocking));
          },
          reps));

  // Host-side bookkeeping a call may do.
  cudaPointerAttributes attr{};
  std::vector<unsigned char> host(4096);
  add("classify", "cudaPointerGetAttributes, device memory",
      median_us(
          [&] {
            for (int i = 0; i < kLoop; ++i) CUDA_CHECK(cudaPointerGetAttributes(&attr, user + i));
          },
          std::max(11, reps / 20), kLoop));
  add("classify", "cudaPointerGetAttributes, pageable host memory",
      median_us(
          [&] {
            for (int i = 0; i < kLoop; ++i)
              CUDA_CHECK(cudaPointerGetAttributes(&attr, host.data() + i));
          },
          std::max(11, reps / 20), kLoop));
  // The driver's plural query with the three attributes a classification needs.
  using GetAttrs = CUresult (*)(unsigned, CUpointer_attribute*, void**, CUdeviceptr);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuPointerGetAttributes", &fn, 12000,
                                              cudaEnableDefault, &found));
  const auto get_attrs = reinterpret_cast<GetAttrs>(fn);
  CUpointer_attribute names[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                  CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                  CU_POINTER_ATTRIBUTE_IS_MANAGED};
  auto driver_query = [&](const void* p) {
    unsigned type = 0;
    int ordinal = -1, managed = 0;
    void* values[3] = {&type, &ordinal, &managed};
    return get_attrs(3, names, values, reinterpret_cast<CUdeviceptr>(p));
  };
  // Pageable memory outside the brk heap (large mallocs are mmap'd).
  const std::size_t mapped_bytes = 1 << 22;
  auto* mapped = static_cast<unsigned char*>(
      mmap(nullptr, mapped_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  mapped[0] = 1;
  if (get_attrs) {
    add("classify", "cuPointerGetAttributes (type, ordinal, managed), device memory",
        median_us(
            [&] {
              for (int i = 0; i < kLoop; ++i) driver_query(user + i);
            },
            std::max(11, reps / 20), kLoop));
    add("classify", "cuPointerGetAttributes (type, ordinal, managed), mmap'd host memory",
        median_us(
            [&] {
              for (int i = 0; i < kLoop; ++i) driver_query(mapped + i);
            },
            std::max(11, reps / 20), kLoop));
  }
  add("classify", "cudaPointerGetAttributes, mmap'd host memory",
      median_us(
          [&] {
            for (int i = 0; i < kLoop; ++i) CUDA_CHECK(cudaPointerGetAttributes(&attr, mapped + i));
          },
          std::max(11, reps / 20), kLoop));
  add("launch (CPU)", "cudaGetLastError",
      median_us(
          [&] {
            for (int i = 0; i < kLoop; ++i) CUDA_CHECK(cudaGetLastError());
          },
          std::max(11, reps / 20), kLoop));
  int device = 0;
  add("device", "cudaGetDevice",
      median_us(
          [&] {
            for (int i = 0; i < kLoop; ++i) CUDA_CHECK(cudaGetDevice(&device));
          },
          std::max(11, reps / 20), kLoop));
  add("device", "cudaSetDevice (same device)",
      median_us(
          [&] {
            for (int i = 0; i < kLoop; ++i) CUDA_CHECK(cudaSetDevice(0));
          },
          std::max(11, reps / 20), kLoop));
  std::mutex mutex;
  add("lock", "std::mutex lock + unlock, uncontended",
      median_us(
          [&] {
            for (int i = 0; i < kLoop; ++i) {
              mutex.lock();
              mutex.unlock();
            }
          },
          std::max(11, reps / 20), kLoop));

  // Copies of the same bytes: the contiguous floor.
  for (long bytes : {1024l, 1l << 20, 4l << 20}) {
    const std::string what = "cudaMemcpyAsync D2D " + std::to_string(bytes) + " B";
    const double b = median_us(
        [&] {
          CUDA_CHECK(cudaMemcpyAsync(packed, user, bytes, cudaMemcpyDeviceToDevice, nonblocking));
          CUDA_CHECK(cudaStreamSynchronize(nonblocking));
        },
        reps);
    rows.push_back({"copy+sync", what + ", non-blocking", b});
    const double l = median_us(
        [&] {
          CUDA_CHECK(cudaMemcpyAsync(packed, user, bytes, cudaMemcpyDeviceToDevice, 0));
          CUDA_CHECK(cudaStreamSynchronize(0));
        },
        reps);
    rows.push_back({"copy+sync", what + ", legacy", l});
  }

  // The calls themselves: a 1 KiB vector object and contiguous objects, device to device.
  MPI_Datatype vec;
  MPI_Type_vector(kBlocks, 1, kStride, MPI_BYTE, &vec);
  MPI_Type_commit(&vec);
  int position = 0;
  add("MPI_Pack", "vector(1024,1,512,byte) device -> device",
      median_us(
          [&] {
            position = 0;
            MPI_Pack(user, 1, vec, packed, kBlocks, &position, MPI_COMM_SELF);
          },
          reps));
  add("MPI_Unpack", "vector(1024,1,512,byte) device -> device",
      median_us(
          [&] {
            position = 0;
            MPI_Unpack(packed, kBlocks, &position, user, 1, vec, MPI_COMM_SELF);
          },
          reps));
  for (int bytes : {1024, 1 << 20, 4 << 20}) {
    const std::string what = "contiguous " + std::to_string(bytes) + " B device -> device";
    rows.push_back({"MPI_Pack", what,
                    median_us(
                        [&] {
                          position = 0;
                          MPI_Pack(user, bytes, MPI_BYTE, packed, bytes, &position, MPI_COMM_SELF);
                        },
                        reps)});
    rows.push_back({"MPI_Unpack", what,
                    median_us(
                        [&] {
                          position = 0;
                          MPI_Unpack(packed, bytes, &position, user, bytes, MPI_BYTE,
                                     MPI_COMM_SELF);
                        },
                        reps)});
  }
  MPI_Type_free(&vec);

  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  std::printf("device %s, %s, sched %s, median of %d\n", prop.name, date, sched.c_str(), reps);
  FILE* csv = std::fopen(out.c_str(), "w");
  if (csv) std::fprintf(csv, "device,date,sched,part,what,us\n");
  for (const Row& r : rows) {
    std::printf("  %-13s %-62s %8.3f us\n", r.part.c_str(), r.what.c_str(), r.us);
    if (csv) {
      std::fprintf(csv, "%s,%s,%s,%s,\"%s\",%.4f\n", prop.name, date, sched.c_str(), r.part.c_str(),
                   r.what.c_str(), r.us);
    }
  }
  if (csv) std::fclose(csv);
  CUDA_CHECK(cudaFree(user));
  CUDA_CHECK(cudaFree(packed));
  CUDA_CHECK(cudaFree(sink));
  MPI_Finalize();
  return 0;
}
