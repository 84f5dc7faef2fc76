// NCCL collectives for simumax-measure, NCCL loaded at run time so a node without it gets a sentence, not a
// loader error.
#include <dlfcn.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <cuda_runtime.h>
#include <nccl.h>

#include "engine/common/error.hpp"
#include "measure/gpu_timing.hpp"

namespace simumax::measure::gpu {

namespace {

using common::UsageError;

struct Nccl {
  decltype(&ncclGetUniqueId) get_unique_id;
  decltype(&ncclCommInitRank) init_rank;
  decltype(&ncclCommInitAll) init_all;
  decltype(&ncclAllReduce) all_reduce;
  decltype(&ncclAllGather) all_gather;
  decltype(&ncclReduceScatter) reduce_scatter;
  decltype(&ncclSend) send;
  decltype(&ncclRecv) recv;
  decltype(&ncclGroupStart) group_start;
  decltype(&ncclGroupEnd) group_end;
  decltype(&ncclCommDestroy) destroy;
  decltype(&ncclGetErrorString) error_string;
};

Nccl load_nccl() {
  void* lib = dlopen("libnccl.so.2", RTLD_NOW);
  if (!lib) {
    throw UsageError(std::string("NCCL not found (") + dlerror() +
                     "): install NCCL or pass --skip-nccl to measure compute and memory only");
  }
  auto sym = [&](const char* name) {
    void* p = dlsym(lib, name);
    if (!p) throw UsageError(std::string("NCCL: ") + name + " missing from libnccl.so.2 (NCCL 2.7 or later needed)");
    return p;
  };
  Nccl n;
  n.get_unique_id = reinterpret_cast<decltype(n.get_unique_id)>(sym("ncclGetUniqueId"));
  n.init_rank = reinterpret_cast<decltype(n.init_rank)>(sym("ncclCommInitRank"));
  n.init_all = reinterpret_cast<decltype(n.init_all)>(sym("ncclCommInitAll"));
  n.all_reduce = reinterpret_cast<decltype(n.all_reduce)>(sym("ncclAllReduce"));
  n.all_gather = reinterpret_cast<decltype(n.all_gather)>(sym("ncclAllGather"));
  n.reduce_scatter = reinterpret_cast<decltype(n.reduce_scatter)>(sym("ncclReduceScatter"));
  n.send = reinterpret_cast<decltype(n.send)>(sym("ncclSend"));
  n.recv = reinterpret_cast<decltype(n.recv)>(sym("ncclRecv"));
  n.group_start = reinterpret_cast<decltype(n.group_start)>(sym("ncclGroupStart"));
  n.group_end = reinterpret_cast<decltype(n.group_end)>(sym("ncclGroupEnd"));
  n.destroy = reinterpret_cast<decltype(n.destroy)>(sym("ncclCommDestroy"));
  n.error_string = reinterpret_cast<decltype(n.error_string)>(sym("ncclGetErrorString"));
  return n;
}

void check(const Nccl& n, ncclResult_t r, const std::string& what) {
  if (r != ncclSuccess) throw UsageError("NCCL: " + what + ": " + n.error_string(r));
}

void check(cudaError_t e, const std::string& what) {
  if (e != cudaSuccess) throw UsageError("GPU: " + what + ": " + cudaGetErrorString(e));
}

// Rank 0 writes the id to a temporary file and renames it; the others wait for it (a shared folder).
ncclUniqueId exchange_id(const Nccl& n, const Launch& l, const std::string& dir) {
  namespace fs = std::filesystem;
  ncclUniqueId id{};
  const fs::path file = fs::path(dir) / "simumax-measure.ncclid";
  if (l.rank == 0) {
    check(n, n.get_unique_id(&id), "unique id");
    const fs::path tmp = file.string() + ".tmp";
    std::ofstream(tmp, std::ios::binary).write(reinterpret_cast<const char*>(&id), sizeof(id));
    std::error_code ec;
    fs::rename(tmp, file, ec);
    if (ec) throw UsageError(dir + ": cannot write the NCCL id (--rendezvous must be a folder every rank sees)");
    return id;
  }
  for (int waited = 0; waited < 1200; ++waited) {
    std::ifstream in(file, std::ios::binary);
    if (in.read(reinterpret_cast<char*>(&id), sizeof(id))) return id;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  throw UsageError("launch: rank " + std::to_string(l.rank) + " found no NCCL id from rank 0 in " + dir +
                   " after 120 s (mismatched launch, or --rendezvous not shared between nodes)");
}

}  // namespace

std::vector<CollectiveRow> time_collectives(const Launch& launch, const std::string& rendezvous_dir,
                                            int64_t max_bytes, const TimingOptions& o) {
  const Nccl n = load_nccl();
  // One process per GPU under a launcher; else one process drives every visible GPU.
  std::vector<int> devices;
  int64_t ranks = launch.world;
  if (launch.world == 1) {
    int count = 0;
    check(cudaGetDeviceCount(&count), "device count");
    for (int d = 0; d < count; ++d) devices.push_back(d);
    ranks = count;
  } else {
    int d = 0;
    check(cudaGetDevice(&d), "device");
    devices.push_back(d);
  }
  if (ranks < 2) return {};
  std::vector<ncclComm_t> comms(devices.size());
  if (launch.world == 1) {
    check(n, n.init_all(comms.data(), static_cast<int>(devices.size()), devices.data()), "init");
  } else {
    const ncclUniqueId id = exchange_id(n, launch, rendezvous_dir);
    check(n, n.init_rank(&comms[0], static_cast<int>(launch.world), id, static_cast<int>(launch.rank)), "init");
  }
  const int64_t self = launch.world == 1 ? 0 : launch.rank;
  std::vector<void*> send(devices.size()), recv(devices.size());
  std::vector<cudaStream_t> streams(devices.size());
  for (size_t i = 0; i < devices.size(); ++i) {
    check(cudaSetDevice(devices[i]), "device");
    check(cudaMalloc(&send[i], static_cast<size_t>(max_bytes)), "allocate " + std::to_string(max_bytes >> 20) + " MiB");
    check(cudaMalloc(&recv[i], static_cast<size_t>(max_bytes)), "allocate " + std::to_string(max_bytes >> 20) + " MiB");
    check(cudaStreamCreate(&streams[i]), "stream");
  }
  std::vector<CollectiveRow> out;
  for (const char* coll : {"all_reduce", "all_gather", "reduce_scatter", "all2all", "p2p"}) {
    const std::string c = coll;
    for (int64_t bytes = 1 << 20; bytes <= max_bytes; bytes *= 4) {
      const size_t elems = static_cast<size_t>(bytes) / 2;  // bf16
      const size_t part = elems / static_cast<size_t>(ranks);
      auto issue = [&] {
        check(n, n.group_start(), "group");
        for (size_t i = 0; i < devices.size(); ++i) {
          const int64_t r = launch.world == 1 ? static_cast<int64_t>(i) : self;
          if (c == "all_reduce") check(n, n.all_reduce(send[i], recv[i], elems, ncclBfloat16, ncclSum, comms[i], streams[i]), c);
          if (c == "all_gather") check(n, n.all_gather(send[i], recv[i], part, ncclBfloat16, comms[i], streams[i]), c);
          if (c == "reduce_scatter") check(n, n.reduce_scatter(send[i], recv[i], part, ncclBfloat16, ncclSum, comms[i], streams[i]), c);
          if (c == "all2all") {
            for (int64_t p = 0; p < ranks; ++p) {
              check(n, n.send(static_cast<char*>(send[i]) + p * part * 2, part, ncclBfloat16, static_cast<int>(p), comms[i], streams[i]), c);
              check(n, n.recv(static_cast<char*>(recv[i]) + p * part * 2, part, ncclBfloat16, static_cast<int>(p), comms[i], streams[i]), c);
            }
          }
          if (c == "p2p" && r < 2) {  // rank 0 and 1 exchange `bytes`
            const int peer = static_cast<int>(1 - r);
            check(n, n.send(send[i], elems, ncclBfloat16, peer, comms[i], streams[i]), c);
            check(n, n.recv(recv[i], elems, ncclBfloat16, peer, comms[i], streams[i]), c);
          }
        }
        check(n, n.group_end(), "group");
        for (size_t i = 1; i < devices.size(); ++i) check(cudaStreamSynchronize(streams[i]), c);
      };
      check(cudaSetDevice(devices[0]), "device");
      out.push_back({c, bytes, c == "p2p" ? 2 : ranks, time_launches(streams[0], o, issue)});
    }
  }
  for (size_t i = 0; i < devices.size(); ++i) {
    cudaSetDevice(devices[i]);
    cudaFree(send[i]), cudaFree(recv[i]), cudaStreamDestroy(streams[i]);
    n.destroy(comms[i]);
  }
  return out;
}

}  // namespace simumax::measure::gpu
