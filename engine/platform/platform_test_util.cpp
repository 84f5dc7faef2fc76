#include "engine/platform/platform_test_util.hpp"

#include <random>

#include <simgrid/s4u.hpp>

namespace simumax::platform::testing {

// Loads `path` in SimGrid in a child process and returns, for each pair, "link@GiBps link@GiBps ..." of its
// route (pairs separated by " | "), or "FAILED: ..." (an exception, or SimGrid aborting).
std::string routes_in_child(const std::string& path, const HostPairs& pairs) {
  const auto child = in_child_process([&] {
    namespace sg4 = simgrid::s4u;
    int argc = 2;
    char arg0[] = "platform_test", arg1[] = "--log=root.thres:critical";
    char* argv[] = {arg0, arg1, nullptr};
    sg4::Engine engine(&argc, argv);
    engine.load_platform(path);
    engine.seal_platform();
    std::string out;
    for (const auto& [a, b] : pairs) {
      std::vector<sg4::Link*> links;
      double latency = 0;
      engine.host_by_name(a)->route_to(engine.host_by_name(b), links, &latency);
      if (!out.empty()) out += " | ";
      if (links.empty()) out += "no route " + a + " -> " + b;
      for (size_t i = 0; i < links.size(); ++i) {
        out += (i == 0 ? "" : " ") + links[i]->get_name() + "@" + std::to_string(links[i]->get_bandwidth() / kGiB);
      }
    }
    return out;
  });
  return child.ok ? child.value : "FAILED: " + child.value;
}

// Random edits of `base` (its header comment removed, so that elements are mutated, not prose); every one that
// check_platform_text accepts must load in SimGrid without aborting and route every pair. Returns how many
// mutants were accepted.
int check_accepted_mutants(std::string base, int64_t world, int64_t gpn, const HostPairs& pairs,
                                  const std::vector<std::string>& snippets, int tries, uint64_t seed) {
  base.erase(base.find("<!--\n"), base.find("-->\n") + 4 - base.find("<!--\n"));
  std::mt19937_64 rng(seed);
  int accepted = 0;
  for (int i = 0; i < tries; ++i) {
    std::string x = base;
    for (int k = 1 + static_cast<int>(rng() % 3); k > 0; --k) {
      const size_t at = rng() % x.size();
      switch (rng() % 3) {
        case 0:
          x.erase(at, 1 + rng() % 8);
          break;
        case 1:
          x.insert(at, snippets[rng() % snippets.size()]);
          break;
        default:
          x.insert(at, x.substr(rng() % x.size(), rng() % 60));
          break;
      }
    }
    if (!check_error(x, world, gpn).empty()) continue;
    ++accepted;
    const std::string routes = routes_in_child(write_file("mutant.xml", x), pairs);
    EXPECT_TRUE(routes.find("FAILED") == std::string::npos && routes.find("no route") == std::string::npos)
        << routes << "\n" << x;
  }
  return accepted;
}

}  // namespace simumax::platform::testing
