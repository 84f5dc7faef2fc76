#include "engine/graph/task_table.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace simumax::graph {
namespace {

Task make(uint32_t rank, uint32_t group, double seconds, int16_t mb) {
  Task t;
  t.seconds = seconds;
  t.latency_seconds = seconds / 8;
  t.mem_peak_bytes = 1 << 20;
  t.mem_delta_bytes = -(1 << 10);
  t.rank = rank;
  t.group = group;
  t.name = 3;
  t.microbatch = mb;
  t.layer = 7;
  t.chunk = 1;
  t.kind = group == kNoGroup ? TaskKind::kCompute : TaskKind::kPpComm;
  t.pattern = group == kNoGroup ? CommPattern::kNone : CommPattern::kPeer;
  t.pass = schedule::Pass::kForward;
  t.network = group != kNoGroup;
  t.stream = group == kNoGroup ? kComputeStream : kPpStream;
  return t;
}

void expect_same(const Task& a, const Task& b, size_t i) {
  EXPECT_EQ(a.seconds, b.seconds) << i;
  EXPECT_EQ(a.latency_seconds, b.latency_seconds) << i;
  EXPECT_EQ(a.mem_peak_bytes, b.mem_peak_bytes) << i;
  EXPECT_EQ(a.mem_delta_bytes, b.mem_delta_bytes) << i;
  EXPECT_EQ(a.rank, b.rank) << i;
  EXPECT_EQ(a.group, b.group) << i;
  EXPECT_EQ(a.name, b.name) << i;
  EXPECT_EQ(a.op_ref, b.op_ref) << i;
  EXPECT_EQ(a.microbatch, b.microbatch) << i;
  EXPECT_EQ(a.layer, b.layer) << i;
  EXPECT_EQ(a.chunk, b.chunk) << i;
  EXPECT_EQ(a.kind, b.kind) << i;
  EXPECT_EQ(a.pattern, b.pattern) << i;
  EXPECT_EQ(a.pass, b.pass) << i;
  EXPECT_EQ(a.network, b.network) << i;
  EXPECT_EQ(a.stream, b.stream) << i;
}

// Tasks of ranks 0..7 (a stage's lanes) for two micro-batches, then the transfers of groups 0..3 (rank = the
// group's first member, 2g), one of them on an unusual rank, as a hand-built graph may have.
std::vector<Task> sample() {
  std::vector<Task> tasks;
  for (int16_t mb = 0; mb < 2; ++mb) {
    for (uint32_t r = 0; r < 8; ++r) tasks.push_back(make(r, kNoGroup, 1.5, mb));
  }
  for (uint32_t g = 0; g < 4; ++g) tasks.push_back(make(2 * g, g, 0.25, 0));
  tasks.push_back(make(5, 1, 0.25, 0));
  tasks.push_back(make(2, 1, 0.5, 1));
  return tasks;
}

TEST(TaskTable, ReadsBackEveryTaskAsPushedWithOrWithoutInterning) {
  for (bool interning : {false, true}) {
    TaskTable table;
    table.set_interning(interning);
    const std::vector<Task> tasks = sample();
    for (const Task& t : tasks) table.push_back(t);
    ASSERT_EQ(table.size(), tasks.size());
    for (size_t i = 0; i < tasks.size(); ++i) expect_same(table[i], tasks[i], i);
    size_t i = 0;
    for (const Task& t : table) expect_same(t, tasks[i], i), ++i;
    EXPECT_EQ(i, tasks.size());
    EXPECT_EQ(table.group(16), 0u);
    EXPECT_EQ(table.group(0), kNoGroup);
  }
}

// Equal but for the rank or the group: one prototype (two micro-batches of compute, a transfer, a longer one).
TEST(TaskTable, TasksEqualButForTheirRankOrGroupShareAPrototype) {
  TaskTable table;
  table.set_interning(true);
  for (const Task& t : sample()) table.push_back(t);
  EXPECT_EQ(table.num_prototypes(), 4u);
  TaskTable plain;
  for (const Task& t : sample()) plain.push_back(t);
  EXPECT_EQ(plain.num_prototypes(), sample().size());
}

TEST(TaskTable, SetChangesOneTaskAndNotTheOthersSharingItsPrototype) {
  TaskTable table;
  table.set_interning(true);
  const std::vector<Task> tasks = sample();
  for (const Task& t : tasks) table.push_back(t);
  Task changed = tasks[3];
  changed.seconds = 9;
  table.set(3, changed);
  expect_same(table[3], changed, 3);
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (i != 3) expect_same(table[i], tasks[i], i);
  }
  Task back = tasks[17];  // the odd-rank transfer, back on its group's rank
  back.rank = 2;
  table.set(17, back);
  expect_same(table[17], back, 17);
  table.seal();  // the index goes; pushes after it intern again
  const uint32_t id = table.push_back(tasks[0]);
  expect_same(table[id], tasks[0], id);
}

}  // namespace
}  // namespace simumax::graph
