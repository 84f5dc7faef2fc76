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

// The communicator(s) and buffers of this process: one GPU under a launcher, every visible GPU otherwise.
class Group {
 public:
  Group(const Nccl& n, const Launch& launch, const std::string& rendezvous_dir, int64_t max_bytes) : n_(n) {
    single_ = launch.world == 1;
    if (single_) {
      int count = 0;
      check(cudaGetDeviceCount(&count), "device count");
      for (int d = 0; d < count; ++d) devices_.push_back(d);
      ranks_ = count;
    } else {
      int d = 0;
      check(cudaGetDevice(&d), "device");
      devices_.push_back(d);
      ranks_ = launch.world;
      self_ = launch.rank;
    }
    if (ranks_ < 2) return;
    comms_.resize(devices_.size());
    if (single_) {
      check(n_, n_.init_all(comms_.data(), static_cast<int>(devices_.size()), devices_.data()), "init");
    } else {
      const ncclUniqueId id = exchange_id(n_, launch, rendezvous_dir);
      check(n_, n_.init_rank(&comms_[0], static_cast<int>(launch.world), id, static_cast<int>(launch.rank)), "init");
    }
    const std::string what = "allocate " + std::to_string(max_bytes >> 20) + " MiB";
    send_.resize(devices_.size()), recv_.resize(devices_.size()), streams_.resize(devices_.size());
    for (size_t i = 0; i < devices_.size(); ++i) {
      check(cudaSetDevice(devices_[i]), "device");
      check(cudaMalloc(&send_[i], static_cast<size_t>(max_bytes)), what);
      check(cudaMalloc(&recv_[i], static_cast<size_t>(max_bytes)), what);
      check(cudaStreamCreate(&streams_[i]), "stream");
    }
    check(cudaSetDevice(devices_[0]), "device");
  }
  ~Group() {
    for (size_t i = 0; i < comms_.size(); ++i) {
      cudaSetDevice(devices_[i]);
      if (i < send_.size()) cudaFree(send_[i]), cudaFree(recv_[i]), cudaStreamDestroy(streams_[i]);
      n_.destroy(comms_[i]);
    }
  }
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;

  int64_t ranks() const { return ranks_; }
  void* stream() const { return streams_[0]; }

  // One collective of `bytes` (nccl-tests' size: the whole buffer, bf16) on every GPU of this process, waited for
  // on all but the first (its stream carries the timing events).
  void issue(const std::string& c, int64_t bytes) const {
    const size_t elems = static_cast<size_t>(bytes) / 2, part = elems / static_cast<size_t>(ranks_);
    check(n_, n_.group_start(), "group");
    for (size_t i = 0; i < devices_.size(); ++i) {
      const int64_t r = single_ ? static_cast<int64_t>(i) : self_;
      char* in = static_cast<char*>(send_[i]);
      char* out = static_cast<char*>(recv_[i]);
      if (c == "all_reduce") check(n_, n_.all_reduce(in, out, elems, ncclBfloat16, ncclSum, comms_[i], streams_[i]), c);
      if (c == "all_gather") check(n_, n_.all_gather(in, out, part, ncclBfloat16, comms_[i], streams_[i]), c);
      if (c == "reduce_scatter") {
        check(n_, n_.reduce_scatter(in, out, part, ncclBfloat16, ncclSum, comms_[i], streams_[i]), c);
      }
      for (int64_t p = 0; c == "all2all" && p < ranks_; ++p) {
        check(n_, n_.send(in + p * part * 2, part, ncclBfloat16, static_cast<int>(p), comms_[i], streams_[i]), c);
        check(n_, n_.recv(out + p * part * 2, part, ncclBfloat16, static_cast<int>(p), comms_[i], streams_[i]), c);
      }
      if (c == "p2p" && r < 2) {  // ranks 0 and 1 exchange `bytes`
        check(n_, n_.send(in, elems, ncclBfloat16, static_cast<int>(1 - r), comms_[i], streams_[i]), c);
        check(n_, n_.recv(out, elems, ncclBfloat16, static_cast<int>(1 - r), comms_[i], streams_[i]), c);
      }
    }
    check(n_, n_.group_end(), "group");
    for (size_t i = 1; i < devices_.size(); ++i) check(cudaStreamSynchronize(streams_[i]), c);
  }

 private:
  const Nccl& n_;
  bool single_ = true;
  int64_t ranks_ = 1, self_ = 0;
  std::vector<int> devices_;
  std::vector<ncclComm_t> comms_;
  std::vector<void*> send_, recv_;
  std::vector<cudaStream_t> streams_;
};

}  // namespace

std::vector<CollectiveRow> time_collectives(const Launch& launch, const std::string& rendezvous_dir,
                                            int64_t max_bytes, const TimingOptions& o) {
  const Nccl n = load_nccl();
  const Group group(n, launch, rendezvous_dir, max_bytes);
  if (group.ranks() < 2) return {};
  std::vector<CollectiveRow> out;
  for (const char* coll : {"all_reduce", "all_gather", "reduce_scatter", "all2all", "p2p"}) {
    const std::string c = coll;
    for (int64_t bytes = 1 << 20; bytes <= max_bytes; bytes *= 4) {
      const Timing t = time_launches(group.stream(), o, [&] { group.issue(c, bytes); });
      out.push_back({c, bytes, c == "p2p" ? 2 : group.ranks(), t});
    }
  }
  return out;
}

}  // namespace simumax::measure::gpu
