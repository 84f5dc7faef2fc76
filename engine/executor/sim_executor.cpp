#include "engine/executor/sim_executor.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <functional>
#include <limits>
#include <queue>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include <simgrid/kernel/Timer.hpp>
#include <simgrid/kernel/resource/Action.hpp>
#include <simgrid/s4u.hpp>

#include "engine/common/error.hpp"
#include "engine/common/logging.hpp"
#include "engine/executor/flow_plan.hpp"
#include "engine/executor/sim_engine.hpp"

namespace simumax::executor {

namespace sg4 = simgrid::s4u;

namespace {

using detail::FlowPlan;
using detail::RankHosts;

// Flow size and the timer before the flows, so that on the idle fabric the plan is sized on (the reference)
// the task lasts exactly `seconds`. SimGrid sizes are whole bytes: the rounding goes into the timer, which
// keeps the total exact.
struct FlowSizing {
  uint64_t bytes = 0;  // 0: no flows, the task is a plain timer of `seconds`
  double wait_s = 0;
};

FlowSizing size_flows(const graph::Task& t, const FlowPlan& plan) {
  const double bandwidth_s = t.seconds - t.latency_seconds;
  if (plan.flows.empty() || !(bandwidth_s > 0) || !(plan.share_bytes_per_s > 0)) return {0, t.seconds};
  const double bytes = std::floor(bandwidth_s * plan.share_bytes_per_s);
  if (bytes < 1) return {0, t.seconds};
  return {static_cast<uint64_t>(bytes),
          std::max(0.0, t.seconds - bytes / plan.share_bytes_per_s - plan.route_latency_s)};
}

// How a flow is handed to SimGrid, and why (measured in docs/simgrid.md).
//
// SimGrid 3.32 files every activity under an actor's `activities_`, a std::list it removes from with a linear
// list::remove when the activity ends. A one-sided Comm::sendto is always detached and filed under maestro, so
// with every flow of the job in one list each completion cost O(flows in flight): 39 % of a 16,384-GPU run.
// A flow is therefore a 2-host Exec carrying bytes only, which SimGrid's default host model turns into exactly
// the network action sendto makes (net_model->communicate(src, dst, bytes, -1)); an Exec is filed under the
// actor that *creates* it, so helper actors create them ahead of use (a pool each) and each helper's list holds
// only its pool and its own flows in flight. Maestro sets the hosts and bytes and starts them. SimGrid only
// signals a maestro activity's completion, so a flow's end is seen through Link::on_communication_state_change
// (fired when its network action finishes) and handled in a kernel timer at the same date, after our own
// events of that date, as the completion signal was.
class FlowPool {
 public:
  explicit FlowPool(const std::vector<sg4::Host*>& hosts);
  sg4::ExecPtr take();  // a fresh Exec, made by a helper (or by maestro when that helper's pool ran dry)
  void close();         // lets every helper end (the engine stops when no actor is left blocked)
  uint64_t made_by_maestro() const { return fallback_; }

 private:
  struct Helper {
    sg4::SemaphorePtr bell;  // a blocked helper waits here; suspend() would suspend every Exec it made
    std::vector<sg4::ExecPtr> pool;
    size_t target = 16;
    bool awake = true;
  };
  void refill(size_t h);
  static void wake(Helper& h) {
    if (!h.awake) h.awake = true, h.bell->release();
  }
  std::vector<Helper> helpers_;
  size_t next_ = 0;
  bool closed_ = false;
  uint64_t fallback_ = 0;
};

FlowPool::FlowPool(const std::vector<sg4::Host*>& hosts) {
  // One helper per 16 ranks, 16 Execs in each pool at first: lists of a few dozen; a pool that runs dry doubles.
  const size_t n = std::clamp<size_t>(hosts.size() / 16, 1, 8192);
  helpers_.resize(n);
  for (size_t h = 0; h < n; ++h) {
    helpers_[h].bell = sg4::Semaphore::create(0);
    sg4::Actor::create("flows" + std::to_string(h), hosts[h % hosts.size()], [this, h] { refill(h); });
  }
}

void FlowPool::refill(size_t h) {
  while (!closed_) {
    Helper& me = helpers_[h];
    while (me.pool.size() < me.target) me.pool.push_back(sg4::Exec::init());  // filed under this actor
    me.awake = false;
    me.bell->acquire();
  }
}

sg4::ExecPtr FlowPool::take() {
  Helper& h = helpers_[next_];
  next_ = next_ + 1 == helpers_.size() ? 0 : next_ + 1;
  if (h.pool.empty()) {  // the helper refills at the next scheduling round; grow its pool for next time
    ++fallback_;
    h.target = std::min<size_t>(h.target * 2, 4096);
    wake(h);
    return sg4::Exec::init();  // filed under maestro: correct, only slower to remove
  }
  sg4::ExecPtr e = std::move(h.pool.back());
  h.pool.pop_back();
  if (2 * h.pool.size() < h.target) wake(h);
  return e;
}

void FlowPool::close() {
  if (closed_) return;
  closed_ = true;
  for (Helper& h : helpers_) {
    h.pool.clear();
    wake(h);
  }
}

class SimRun {
 public:
  SimRun(const graph::TaskGraph& g, RankHosts hosts, const SimOptions& o)
      : g_(g),
        hosts_(std::move(hosts)),
        reference_(o.spec),
        sink_(o.sink),
        keep_(o.keep_timeline),
        flow_timers_(o.flow_timers) {}

  Timeline run(sg4::Engine& engine);
  uint64_t flows_started() const { return flows_started_; }
  uint64_t flows_made_by_maestro() const { return pool_ ? pool_->made_by_maestro() : 0; }
  uint64_t flows_on_simgrid() const { return flows_on_simgrid_; }

 private:
  // An event's code: what happens (the high word) to which task or lone flow (the low word). At one date, task
  // ends go first, then flow starts, then lone flows' ends, as SimGrid reports a flow's end after its timers.
  static constexpr uint64_t kTaskEnds = 0, kSendFlows = 1ull << 32, kLoneFlowEnds = 2ull << 32;
  struct Event {
    double date;
    uint64_t code;
  };
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.date > b.date || (a.date == b.date && a.code > b.code);
    }
  };
  // A flow running as a timer at its lone rate (see SimOptions::flow_timers).
  struct LoneFlow {
    uint32_t task = 0;
    uint32_t flow = 0;
    double start = 0;
    double end = 0;
    double bytes = 0;
    double rate = 0;
    bool handed_over = false;  // now on SimGrid; its end event is stale (the slot is freed when it pops)
  };

  // A flow's SimGrid data: its task (+1, so that it is never null) and its index in the task's plan.
  static uintptr_t flow_code(uint32_t task, uint32_t flow) {
    return (static_cast<uintptr_t>(task) + 1) << 32 | flow;
  }
  void push(double date, uint64_t code) {
    heap_.push_back({date, code});
    std::push_heap(heap_.begin(), heap_.end(), Later{});
  }
  const FlowPlan& plan_of(const graph::Task& t);
  double start_of(uint32_t task) const { return keep_ ? tl_.start[task] : net_start_.at(task); }
  std::string stuck_tasks() const;
  void start(uint32_t task, double now);
  void finish(uint32_t task, double now);
  void send_flows(uint32_t task);
  bool fits_as_timer(std::span<const uint32_t> links, double rate, double now) const;
  void hand_over_sharing(std::span<const uint32_t> links, double now);
  void leave_links(uint32_t lone);
  void start_on_simgrid(uint32_t task, uint32_t flow, double bytes);
  void hand_over(uint32_t lone, double now);
  void lone_flow_ended(uint32_t lone, double now);
  void flow_ended(uint32_t task, uint32_t flow, double now);
  void drain();
  void arm();
  void on_action_finished(const simgrid::kernel::resource::Action& action);
  void on_flows_done();
  void on_flow_done(uintptr_t code);

  const graph::TaskGraph& g_;
  RankHosts hosts_;
  std::optional<platform::PlatformSpec> reference_;  // the fabric flows are sized on (see build_plan)
  TaskSink* sink_;
  bool keep_;  // fill tl_.start / tl_.end; without, net_start_ keeps what the run itself needs
  bool flow_timers_;
  std::unordered_map<uint32_t, double> net_start_;  // !keep_: start of each network task not ended yet
  detail::LinkTracker links_;
  Timeline tl_;
  std::vector<uint32_t> counter_;  // predecessors left until the task starts; then its flows in flight
  std::vector<Event> heap_;        // task ends and flow starts; SimGrid sees one timer per date, and only
                                   // while flows are in flight (see drain)
  std::priority_queue<double, std::vector<double>, std::greater<>> armed_;  // dates of SimGrid timers set
  static constexpr size_t kPatterns = 4;  // graph::CommPattern's values
  static_assert(static_cast<size_t>(graph::CommPattern::kPeer) + 1 == kPatterns);
  static constexpr uint32_t kNoPlan = std::numeric_limits<uint32_t>::max();
  std::vector<uint32_t> plan_index_;  // [group][pattern] -> plans_, or kNoPlan
  std::deque<FlowPlan> plans_;        // a deque: a plan's address stays valid while others are added
  std::optional<FlowPool> pool_;
  struct LiveFlow {
    uintptr_t code;  // see flow_code
    sg4::ExecPtr exec;
  };
  std::unordered_map<const void*, LiveFlow> live_;  // by the Exec's kernel activity
  std::vector<LiveFlow> done_;                      // ended at this date, not handled yet (see on_flows_done)
  std::vector<LiveFlow> handled_;
  std::vector<sg4::ExecPtr> graveyard_;  // kept until SimGrid has posted them (released at the next time step)
  std::vector<LoneFlow> lone_;         // slots; free ones listed in free_lone_
  std::vector<uint32_t> free_lone_;
  std::vector<std::vector<uint32_t>> lones_on_link_;  // per LinkTracker index (not FATPIPE): its lone flows
  std::vector<uint32_t> handover_links_;              // hand_over_sharing's links still to visit
  bool done_timer_set_ = false;
  uint64_t live_flows_ = 0;  // on SimGrid
  uint64_t flows_started_ = 0;
  uint64_t flows_on_simgrid_ = 0;
  uint64_t completed_ = 0;
};

// Three calls per flow task (start, send, each flow's end): an array lookup, not a hash (3 % of a 4k-GPU run).
const FlowPlan& SimRun::plan_of(const graph::Task& t) {
  const size_t key = static_cast<size_t>(t.group) * kPatterns + static_cast<size_t>(t.pattern);
  if (plan_index_.empty()) plan_index_.assign(g_.groups.size() * kPatterns, kNoPlan);
  uint32_t& index = plan_index_[key];
  if (index == kNoPlan) {
    index = static_cast<uint32_t>(plans_.size());
    plans_.push_back(detail::build_plan(g_, t, hosts_, reference_, links_));
  }
  return plans_[index];
}

void SimRun::start(uint32_t task, double now) {
  if (keep_) tl_.start[task] = now;
  if (sink_) sink_->started(task, now);
  const graph::Task& t = g_.tasks[task];
  if (t.network && t.group != graph::kNoGroup) {
    const FlowSizing sizing = size_flows(t, plan_of(t));
    if (!keep_) net_start_.emplace(task, now);
    if (sizing.bytes > 0) return push(now + sizing.wait_s, kSendFlows | task);
  }
  push(now + t.seconds, kTaskEnds | task);
}

void SimRun::finish(uint32_t task, double now) {
  if (keep_) tl_.end[task] = now;
  if (!keep_ && g_.tasks.proto(task).network) net_start_.erase(task);
  if (sink_) sink_->ended(task, now);
  tl_.makespan = std::max(tl_.makespan, now);
  ++completed_;
  for (uint32_t i = g_.succ_offsets[task]; i < g_.succ_offsets[task + 1]; ++i) {
    const uint32_t s = g_.succ[i];
    if (--counter_[s] == 0) start(s, now);
  }
}

// Whether a flow of `rate` starting now keeps every flow on its links at its lone rate: no link carries a flow
// on SimGrid, and on each (FATPIPE links aside) the lone flows' rates and this one's fit in its bandwidth. Then
// max-min sharing gives every flow its slowest link's bandwidth, as a timer does. Lone flows ending now do not
// count: they are gone before this flow moves a byte.
bool SimRun::fits_as_timer(std::span<const uint32_t> links, double rate, double now) const {
  for (uint32_t l : links) {
    if (links_.fatpipe(l)) continue;
    const std::vector<uint32_t>& lones = lones_on_link_[l];
    if (links_.active(l) > lones.size()) return false;  // a flow on SimGrid
    double sum = rate;
    for (uint32_t lone : lones) {
      if (lone_[lone].end > now) sum += lone_[lone].rate;
    }
    if (sum > links_.bandwidth(l)) return false;
  }
  return true;
}

void SimRun::leave_links(uint32_t lone) {
  const LoneFlow& f = lone_[lone];
  for (uint32_t l : plan_of(g_.tasks[f.task]).links_of(f.flow)) {
    if (links_.fatpipe(l)) continue;
    std::vector<uint32_t>& lones = lones_on_link_[l];
    const auto it = std::find(lones.begin(), lones.end(), lone);
    if (it != lones.end()) {
      *it = lones.back();
      lones.pop_back();
    }
  }
}

// A flow on SimGrid now crosses `links`: every lone flow sharing a link with it goes to SimGrid too, and so on
// through their links, so that no link carries both (SimGrid would not see the timers' share of it).
void SimRun::hand_over_sharing(std::span<const uint32_t> links, double now) {
  std::vector<uint32_t>& todo = handover_links_;
  todo.assign(links.begin(), links.end());
  while (!todo.empty()) {
    const uint32_t l = todo.back();
    todo.pop_back();
    if (links_.fatpipe(l)) continue;
    for (size_t k = 0; k < lones_on_link_[l].size();) {
      const uint32_t lone = lones_on_link_[l][k];
      if (lone_[lone].end <= now) {  // ends now: nothing left to share
        ++k;
        continue;
      }
      const std::span<const uint32_t> its_links = plan_of(g_.tasks[lone_[lone].task]).links_of(lone_[lone].flow);
      hand_over(lone, now);  // removes it from lones_on_link_[l]: k now holds the next one
      todo.insert(todo.end(), its_links.begin(), its_links.end());
    }
  }
}

void SimRun::start_on_simgrid(uint32_t task, uint32_t flow, double bytes) {
  const FlowPlan& plan = plan_of(g_.tasks[task]);
  sg4::ExecPtr exec = pool_->take();  // a flow (see FlowPool)
  exec->set_hosts({plan.flows[flow].first, plan.flows[flow].second});
  exec->set_bytes_amounts({0, bytes, 0, 0});
  exec->start();
  const void* key = exec->get_impl();
  live_.emplace(key, LiveFlow{flow_code(task, flow), std::move(exec)});
  ++live_flows_;
  ++flows_on_simgrid_;
}

// Lone flow `lone` goes to SimGrid with the bytes it has left (see hand_over_sharing).
void SimRun::hand_over(uint32_t lone, double now) {
  leave_links(lone);
  LoneFlow& f = lone_[lone];
  f.handed_over = true;
  start_on_simgrid(f.task, f.flow, f.bytes * (f.end - now) / (f.end - f.start));
}

void SimRun::send_flows(uint32_t task) {
  const graph::Task& t = g_.tasks[task];
  const FlowPlan& plan = plan_of(t);
  const uint64_t bytes = size_flows(t, plan).bytes;
  const double now = sg4::Engine::get_clock();
  for (uint32_t f = 0; f < plan.flows.size(); ++f) {
    const std::span<const uint32_t> links = plan.links_of(f);
    const double rate = plan.lone_bytes_per_s[f];
    if (flow_timers_ && plan.route_latency_s == 0 && fits_as_timer(links, rate, now)) {
      uint32_t lone = 0;
      if (free_lone_.empty()) {
        lone = static_cast<uint32_t>(lone_.size());
        lone_.emplace_back();
      } else {
        lone = free_lone_.back();
        free_lone_.pop_back();
      }
      const double end = now + static_cast<double>(bytes) / rate;
      lone_[lone] = LoneFlow{task, f, now, end, static_cast<double>(bytes), rate, false};
      for (uint32_t l : links) {
        if (!links_.fatpipe(l)) lones_on_link_[l].push_back(lone);
      }
      push(end, kLoneFlowEnds | lone);
    } else {
      hand_over_sharing(links, now);
      start_on_simgrid(task, f, static_cast<double>(bytes));
    }
    links_.flow_started(links, static_cast<double>(bytes), now);
  }
  counter_[task] = static_cast<uint32_t>(plan.flows.size());
  flows_started_ += plan.flows.size();
}

void SimRun::lone_flow_ended(uint32_t lone, double now) {
  free_lone_.push_back(lone);
  if (lone_[lone].handed_over) return;  // SimGrid reports its end
  leave_links(lone);
  flow_ended(lone_[lone].task, lone_[lone].flow, now);
}

// Runs our events in date order. While no flow is in flight nothing in SimGrid can happen before our next
// event, so timers run here without going through SimGrid at all; flows must start at SimGrid's clock.
void SimRun::drain() {
  const double clock = sg4::Engine::get_clock();
  while (!heap_.empty()) {
    const Event ev = heap_.front();
    const uint64_t kind = ev.code & ~uint64_t{0xffffffffu};
    const auto id = static_cast<uint32_t>(ev.code);
    if (ev.date > clock && (kind == kSendFlows || live_flows_ > 0)) break;
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    heap_.pop_back();
    if (kind == kSendFlows) {
      send_flows(id);
    } else if (kind == kLoneFlowEnds) {
      lone_flow_ended(id, ev.date);
    } else {
      finish(id, ev.date);
    }
  }
}

void SimRun::arm() {
  const double clock = sg4::Engine::get_clock();
  while (!armed_.empty() && armed_.top() <= clock) armed_.pop();
  if (heap_.empty()) {
    if (live_flows_ == 0) pool_->close();  // nothing can happen any more (done, or stuck: see run)
    return;
  }
  const double next = heap_.front().date;
  if (!armed_.empty() && armed_.top() <= next) return;
  armed_.push(next);
  simgrid::kernel::timer::Timer::set(next, [this] {
    drain();
    arm();
  });
}

// Called while SimGrid updates its network model: only notes the flow, handled in a timer at this date.
void SimRun::on_action_finished(const simgrid::kernel::resource::Action& action) {
  if (action.get_state() != simgrid::kernel::resource::Action::State::FINISHED) return;
  auto it = live_.find(action.get_activity());
  if (it == live_.end()) return;
  done_.push_back(std::move(it->second));
  live_.erase(it);
  if (!done_timer_set_) {
    done_timer_set_ = true;
    simgrid::kernel::timer::Timer::set(sg4::Engine::get_clock(), [this] { on_flows_done(); });
  }
}

// The flows that ended at this date, in the order SimGrid finished them. Our own events of this date go first:
// SimGrid runs the timers of a date before it reports that date's completions, and this keeps that order.
// The Execs are released at the next time step: SimGrid posts them after this timer (a use-after-free before).
void SimRun::on_flows_done() {
  done_timer_set_ = false;
  drain();
  handled_.swap(done_);
  for (LiveFlow& f : handled_) {
    on_flow_done(f.code);
    graveyard_.push_back(std::move(f.exec));
  }
  handled_.clear();
}

void SimRun::on_flow_done(uintptr_t code) {
  --live_flows_;
  flow_ended(static_cast<uint32_t>((code >> 32) - 1), static_cast<uint32_t>(code & 0xffffffffu),
             sg4::Engine::get_clock());
  drain();
  arm();
}

void SimRun::flow_ended(uint32_t task, uint32_t flow, double now) {
  const graph::Task& t = g_.tasks[task];
  const FlowPlan& plan = plan_of(t);
  const FlowSizing sizing = size_flows(t, plan);  // the flows were sent after the task's wait (see start)
  links_.flow_ended(plan.links_of(flow), static_cast<double>(sizing.bytes), start_of(task) + sizing.wait_s, now);
  if (--counter_[task] == 0) finish(task, now);
}

Timeline SimRun::run(sg4::Engine& engine) {
  const size_t n = g_.size();
  tl_.executor = "sim";
  if (keep_) {
    tl_.start.assign(n, -1.0);  // -1: not started / not ended, for the stuck-task report
    tl_.end.assign(n, -1.0);
  }
  counter_.assign(g_.in_degree.begin(), g_.in_degree.end());
  pool_.emplace(hosts_.gpu);
  // NetworkAction (an internal class, only declared in the installed headers) derives from Action alone.
  sg4::Link::on_communication_state_change_cb([this](simgrid::kernel::resource::NetworkAction& a,
                                                     simgrid::kernel::resource::Action::State) {
    on_action_finished(reinterpret_cast<const simgrid::kernel::resource::Action&>(a));
  });
  sg4::Engine::on_time_advance_cb([this](double) { graveyard_.clear(); });
  // Every route is looked up before the run, so that a platform error is thrown here and not through
  // SimGrid's main loop.
  for (const graph::Task& t : g_.tasks) {
    if (t.network && t.group != graph::kNoGroup) plan_of(t);
  }
  lones_on_link_.resize(links_.size());
  for (uint32_t t = 0; t < n; ++t) {
    if (counter_[t] == 0) start(t, 0.0);
  }
  arm();
  engine.run();
  graveyard_.clear();
  if (completed_ != n) {
    throw common::InternalError("sim: " + std::to_string(n - completed_) + " of " + std::to_string(n) +
                                " tasks never completed (a cycle in the task graph?), e.g. " + stuck_tasks());
  }
  tl_.links = links_.usage(tl_.makespan);
  tl_.link_bucket_seconds = links_.series_bucket_seconds();
  return std::move(tl_);
}

// A few tasks that never ended. Without the timeline: once SimGrid has nothing left to run every timer has
// fired, so a task not ended either has predecessors left (never started) or is a network task in net_start_.
std::string SimRun::stuck_tasks() const {
  std::vector<bool> ended;
  if (!keep_) {
    ended.assign(g_.size(), true);
    for (uint32_t t = 0; t < g_.size(); ++t) {
      if (counter_[t] > 0 || net_start_.count(t)) ended[t] = false;
    }
  }
  std::string stuck;
  int listed = 0;
  for (uint32_t t = 0; t < g_.size() && listed < 5; ++t) {
    const bool done = keep_ ? tl_.end[t] >= 0 : ended[t];
    if (done) continue;
    const bool started = keep_ ? tl_.start[t] >= 0 : net_start_.count(t) > 0;
    const graph::Task& task = g_.tasks[t];
    stuck += (listed++ ? ", " : "") + (task.name < g_.names.size() ? g_.names[task.name] : std::string("?")) + " (#" +
             std::to_string(t) + (counter_[t] > 0 && !started ? ", never started)" : ")");
  }
  return stuck;
}

constexpr size_t kMaxTasks = size_t{1} << 31;  // task ids and flow indices are 32-bit halves of a flow code

}  // namespace

Timeline run_sim_in_process(const graph::TaskGraph& graph, const SimOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  if (!options.log_level.empty()) common::set_log_level(options.log_level);
  if (graph.size() >= kMaxTasks) throw common::InternalError("run_sim: too many tasks for 31-bit ids");
  detail::LoadedPlatform loaded = detail::load_platform(graph, options);
  const auto wall_loaded = std::chrono::steady_clock::now();

  SimRun run(graph, std::move(loaded.hosts), options);
  Timeline tl = run.run(*loaded.engine);
  const auto wall_end = std::chrono::steady_clock::now();
  common::logger("sim")->info(
      "{} tasks, {} flows ({} on SimGrid, {} made by maestro) on {} ranks: makespan {:.9f} s; wall {:.3f} s "
      "platform + {:.3f} s run",
      graph.size(), run.flows_started(), run.flows_on_simgrid(), run.flows_made_by_maestro(), graph.num_ranks,
      tl.makespan,
      std::chrono::duration<double>(wall_loaded - wall_start).count(),
      std::chrono::duration<double>(wall_end - wall_loaded).count());
  return tl;
}

}  // namespace simumax::executor

// The entry point libsimumax_sim.so exports for sim_loader.cpp (dlopen keeps SimGrid, and the ns-3 libraries
// it links, out of processes that never simulate: loading them costs ~20 ms of start-up).
extern "C" void simumax_run_sim_entry(const simumax::graph::TaskGraph* graph,
                                      const simumax::executor::SimOptions* options,
                                      simumax::executor::Timeline* out) {
  *out = simumax::executor::run_sim_in_process(*graph, *options);
}

