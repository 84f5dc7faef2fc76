// Probe (not product code): can SimGrid 3.32 run many concurrent host-to-host flows without every flow sitting
// in maestro's one activities_ list (std::list::remove per completion = O(live flows))?
//
//   mode comm : Comm::sendto_init from maestro (what sim_executor does): detached, maestro's list.
//   mode exec : a 2-host Exec (bytes only), which HostCLM03Model::execute_parallel turns into the same
//               net_model->communicate(src, dst, bytes, -1) call. The ExecImpl is created inside one of H helper
//               actors (ExecImpl's constructor files it under ActorImpl::self()), so each helper's list holds
//               only its own execs; maestro starts it. Completion is seen through Link::on_communication_state_change
//               (the s4u completion signal only fires for maestro's activities) and processed in a kernel timer
//               at the same date.
//
// Workload: N NIC hosts of a generated platform; every host keeps 2 flows going (to r+1 and r+3), R rounds each,
// sizes varying deterministically. Prints a checksum of all completion dates (must be equal in both modes).
//
// Build and run (the numbers in docs/simgrid.md):
//   g++ -std=c++17 -O2 -o list_probe list_probe.cpp -lsimgrid
//   simumax-sim platform platforms/b200_bf16.json --nodes 512 -o star512.xml
//   list_probe star512.xml comm 4096 5 1024 8 --log=root.thres:critical   (then: exec)
#include <simgrid/kernel/Timer.hpp>
#include <simgrid/kernel/resource/Action.hpp>
#include <simgrid/s4u.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

namespace sg4 = simgrid::s4u;
namespace kr = simgrid::kernel::resource;

namespace {

int N = 1024, R = 20, H = 256, P = 8;
bool use_exec = false;
std::vector<sg4::Host*> hosts;
double checksum = 0;
long done_flows = 0;

struct Stream {
  int src, dst, round;
};
std::vector<Stream> streams;

uint64_t size_of(const Stream& s) { return 1000000ull * (1 + (s.src * 7 + s.round * 3 + s.dst) % 13); }

// ---- comm mode
std::vector<sg4::Activity*> graveyard;
void flush() {
  for (auto* a : graveyard) a->unref();
  graveyard.clear();
}
void start_comm(int id) {
  const Stream& s = streams[id];
  sg4::CommPtr c = sg4::Comm::sendto_init(hosts[s.src], hosts[s.dst]);
  c->set_payload_size(size_of(s));
  c->set_data(reinterpret_cast<void*>(static_cast<intptr_t>(id + 1)));
  c->start();
  c->add_ref();
}

// ---- exec mode
struct Helper {
  sg4::ActorPtr actor;
  sg4::SemaphorePtr bell;  // not suspend(): suspending an actor suspends every activity it created
  std::vector<sg4::ExecPtr> pool;
  bool awake = false;
};
std::vector<Helper> helpers;
bool quit = false;
std::unordered_map<const void*, std::pair<int, sg4::ExecPtr>> live;  // ActivityImpl* -> stream, handle
std::vector<int> pending;
bool timer_set = false;
std::vector<sg4::ExecPtr> exec_graveyard;
long fallback = 0;
int next_helper = 0;

void helper_main(int h) {
  while (!quit) {
    Helper& me = helpers[h];
    while (static_cast<int>(me.pool.size()) < P) me.pool.push_back(sg4::Exec::init());
    me.awake = false;
    me.bell->acquire();
  }
}

sg4::ExecPtr take_exec() {
  Helper& h = helpers[next_helper];
  next_helper = (next_helper + 1) % H;
  if (h.pool.size() * 2 < static_cast<size_t>(P) && !h.awake) {
    h.awake = true;
    h.bell->release();
  }
  if (h.pool.empty()) {
    ++fallback;
    return sg4::Exec::init();
  }
  sg4::ExecPtr e = std::move(h.pool.back());
  h.pool.pop_back();
  return e;
}

void start_exec(int id) {
  const Stream& s = streams[id];
  sg4::ExecPtr e = take_exec();
  e->set_hosts({hosts[s.src], hosts[s.dst]});
  e->set_flops_amounts({0, 0});
  e->set_bytes_amounts({0, static_cast<double>(size_of(s)), 0, 0});
  e->start();
  live.emplace(e->get_impl(), std::make_pair(id, e));
}

void on_done(int id) {
  const double now = sg4::Engine::get_clock();
  checksum += now * (1 + id % 17);
  ++done_flows;
  Stream& s = streams[id];
  if (++s.round < R) {
    if (use_exec) start_exec(id); else start_comm(id);
  }
}

void process_pending() {
  timer_set = false;
  std::vector<int> now_done;
  now_done.swap(pending);
  for (int id : now_done) on_done(id);
  if (done_flows == static_cast<long>(streams.size()) * R) {
    quit = true;
    for (auto& h : helpers)
      if (!h.awake) { h.awake = true; h.bell->release(); }
  }
}

}  // namespace

int main(int argc, char** argv) {
  sg4::Engine e(&argc, argv);
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("network/TCP-gamma:1e30");
  sg4::Engine::set_config("surf/precision:1e-12");
  if (argc < 3) { std::fprintf(stderr, "usage: list_probe PLATFORM comm|exec [N R H P]\n"); return 2; }
  e.load_platform(argv[1]);
  use_exec = std::strcmp(argv[2], "exec") == 0;
  if (argc > 3) N = std::atoi(argv[3]);
  if (argc > 4) R = std::atoi(argv[4]);
  if (argc > 5) H = std::atoi(argv[5]);
  if (argc > 6) P = std::atoi(argv[6]);
  for (int r = 0; r < N; ++r) hosts.push_back(e.host_by_name("nic" + std::to_string(r)));
  for (int r = 0; r < N; ++r) {
    streams.push_back({r, (r + 8) % N, 0});
    streams.push_back({r, (r + 24) % N, 0});
  }
  const auto t0 = std::chrono::steady_clock::now();
  if (use_exec) {
    helpers.resize(H);
    for (int h = 0; h < H; ++h) {
      helpers[h].awake = true;
      helpers[h].bell = sg4::Semaphore::create(0);
      helpers[h].actor = sg4::Actor::create("helper" + std::to_string(h), hosts[h % N], helper_main, h);
    }
    sg4::Link::on_communication_state_change_cb([](kr::NetworkAction& na, kr::Action::State) {
      // NetworkAction derives from Action alone (kernel/resource/NetworkModel.hpp), forward-declared here.
      auto& a = reinterpret_cast<kr::Action&>(na);
      if (a.get_state() != kr::Action::State::FINISHED) return;
      auto it = live.find(a.get_activity());
      if (it == live.end()) return;
      pending.push_back(it->second.first);
      exec_graveyard.push_back(std::move(it->second.second));
      live.erase(it);
      if (!timer_set) {
        timer_set = true;
        simgrid::kernel::timer::Timer::set(sg4::Engine::get_clock(), [] { process_pending(); });
      }
    });
    sg4::Engine::on_time_advance_cb([](double) { exec_graveyard.clear(); });
    // the first flows start once the helpers have filled their pools
    simgrid::kernel::timer::Timer::set(0.0, [] {
      for (size_t i = 0; i < streams.size(); ++i) start_exec(static_cast<int>(i));
    });
  } else {
    sg4::Activity::on_completion_cb([](const sg4::Activity& a) {
      flush();
      graveyard.push_back(const_cast<sg4::Activity*>(&a));
      on_done(static_cast<int>(reinterpret_cast<intptr_t>(a.get_data<void>()) - 1));
    });
    sg4::Engine::on_time_advance_cb([](double) { flush(); });
    for (size_t i = 0; i < streams.size(); ++i) start_comm(static_cast<int>(i));
  }
  e.run();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%s N=%d R=%d H=%d P=%d flows=%ld end=%.17g checksum=%.17g wall=%.3f fallback=%ld\n", argv[2], N, R, H,
              P, done_flows, sg4::Engine::get_clock(), checksum, wall, fallback);
  return done_flows == static_cast<long>(streams.size()) * R ? 0 : 3;
}
