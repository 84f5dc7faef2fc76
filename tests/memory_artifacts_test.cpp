// `run --memory` through the CLI: the timeline's and the snapshot's peak equal the reported peak for every
// validation scenario; the pickle round-trips through python3's pickle module into PyTorch's snapshot
// structure (docs/memory-artifacts.md), with allocations that never overlap and blocks that tile segments.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/cli_runner.hpp"

namespace simumax::tests {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kRoot = SIMUMAX_SOURCE_DIR;

fs::path out_dir(const std::string& name) {
  return fs::temp_directory_path() / ("simumax-memory-" + name + "-" + std::to_string(getpid()));
}

json read_json(const fs::path& p) { return json::parse(read_file(p.string())); }

class MemoryPeak : public ::testing::TestWithParam<std::string> {};

TEST_P(MemoryPeak, TimelineAndSnapshotPeaksEqualTheReportedPeak) {
  const fs::path out = out_dir("peak");
  const auto r = run_cli({"run", (kRoot / "scenarios" / GetParam()).string(), "--memory", "-q", "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json summary = read_json(out / "summary.json");
  const json timeline = read_json(out / "memory_timeline.json");
  const json snapshot = read_json(out / "memory_snapshot.json");
  ASSERT_EQ(timeline["ranks"].size(), summary["stages"].size());  // one rank per pipeline stage
  for (size_t i = 0; i < timeline["ranks"].size(); ++i) {
    const json& rank = timeline["ranks"][i];
    const int64_t reported = summary["stages"][rank["pp_stage"].get<size_t>()]["memory"]["peak_alloc_bytes"];
    int64_t max_allocated = 0;
    for (const json& s : rank["samples"]) {
      max_allocated = std::max(max_allocated, s[1].get<int64_t>());
      EXPECT_EQ(s[1].get<int64_t>(), s[2].get<int64_t>() + s[3].get<int64_t>() + s[4].get<int64_t>());
    }
    EXPECT_EQ(max_allocated, reported) << "rank " << rank["rank"];
    EXPECT_EQ(rank["peak_allocated_bytes"].get<int64_t>(), reported);
    const json& peak = snapshot["ranks"][i]["peak"];
    EXPECT_EQ(peak["allocated_bytes"].get<int64_t>(), reported);
    int64_t live = 0;
    for (const json& a : peak["live"]) live += a["bytes"].get<int64_t>();
    EXPECT_EQ(live, reported);
  }
  fs::remove_all(out);
}

std::string name_of(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = info.param;
  for (char& c : n) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return n;
}

INSTANTIATE_TEST_SUITE_P(Validation, MemoryPeak, ::testing::ValuesIn(validation_scenarios(SIMUMAX_SOURCE_DIR)),
                         name_of);

// Checks the documented structure and prints "ok" (or what is wrong). argv: pickle path, then per device
// "device:peak" as memory_snapshot.json reports it.
const char* kCheckPickle = R"(import pickle, sys
d = pickle.load(open(sys.argv[1], 'rb'))
want_peak = dict(tuple(map(int, a.split(':'))) for a in sys.argv[2:])
assert isinstance(d, dict) and set(d) == {'segments', 'device_traces'}, sorted(d)
assert isinstance(d['segments'], list) and isinstance(d['device_traces'], list)
def frames(fs):
    assert isinstance(fs, list)
    for f in fs:
        assert set(f) == {'filename', 'line', 'name'} and isinstance(f['filename'], str)
        assert isinstance(f['line'], int) and isinstance(f['name'], str)
for seg in d['segments']:
    for k, t in [('device', int), ('address', int), ('total_size', int), ('allocated_size', int),
                 ('active_size', int), ('requested_size', int), ('stream', int), ('segment_type', str),
                 ('segment_pool_id', tuple), ('is_expandable', bool), ('frames', list), ('blocks', list)]:
        assert isinstance(seg[k], t), (k, seg[k])
    at, active = seg['address'], 0
    for b in seg['blocks']:
        assert b['address'] == at, 'blocks do not tile the segment'
        assert b['state'] in ('active_allocated', 'inactive') and isinstance(b['size'], int)
        frames(b['frames'])
        at += b['size']
        active += b['size'] if b['state'] == 'active_allocated' else 0
    assert at == seg['address'] + seg['total_size'] and active == seg['allocated_size']
for dev, trace in enumerate(d['device_traces']):
    assert isinstance(trace, list)
    live, total, peak = {}, 0, 0
    for e in trace:
        assert set(e) == {'action', 'addr', 'size', 'stream', 'time_us', 'frames'}, sorted(e)
        assert all(isinstance(e[k], int) for k in ('addr', 'size', 'stream', 'time_us'))
        frames(e['frames'])
        if e['action'] == 'alloc':
            assert all(e['addr'] + e['size'] <= a or a + s <= e['addr'] for a, s in live.items()), 'overlap'
            live[e['addr']] = e['size']
            total += e['size']
            peak = max(peak, total)
        elif e['action'] == 'free_completed':
            assert live.pop(e['addr']) == e['size']
            total -= e['size']
        else:
            assert e['action'] in ('segment_alloc', 'free_requested'), e['action']
    if trace or dev in want_peak:
        assert peak == want_peak[dev], (dev, peak, want_peak.get(dev))
print('ok')
)";

TEST(MemoryViz, PickleRoundTripsThroughPythonIntoTheSnapshotStructure) {
  if (std::system("python3 -c 'import pickle' >/dev/null 2>&1") != 0) GTEST_SKIP() << "python3 not found";
  const fs::path out = out_dir("pickle");
  const auto r = run_cli({"run", (kRoot / "tests/data/trace/llama3_8b_64gpu.json").string(), "--ranks", "all",
                          "--granularity", "op", "--memory", "--trace-ranks", "0,17,63", "-q", "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string cmd = "python3 " + (out / "check.py").string() + " " + (out / "memory_snapshot.pickle").string();
  const json snapshot = read_json(out / "memory_snapshot.json");
  for (const json& rank : snapshot["ranks"]) {
    cmd += ' ';
    cmd += std::to_string(rank["rank"].get<int>());
    cmd += ':';
    cmd += std::to_string(rank["peak"]["allocated_bytes"].get<int64_t>());
  }
  std::ofstream(out / "check.py") << kCheckPickle;
  std::string printed;
  if (FILE* p = popen((cmd + " 2>&1").c_str(), "r")) {
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) printed.append(buf, n);
    pclose(p);
  }
  EXPECT_EQ(printed, "ok\n");
  fs::remove_all(out);
}

}  // namespace
}  // namespace simumax::tests
