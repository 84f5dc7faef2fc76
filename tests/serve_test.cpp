// `simumax-sim serve` (issue #17): loopback only, the CLI's numbers for an edited config, no file outside the
// served folders, 1,000 malformed requests survived without crashing or growing, downloads, compare and search.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/serve_client.hpp"

namespace simumax::tests::serve {
namespace {

TEST(Serve, ListensOnLoopbackOnly) {
  Server s;
  ASSERT_GT(s.port(), 0);
  char port_hex[8];
  std::snprintf(port_hex, sizeof port_hex, "%04X", s.port());
  const std::string tcp = read_file("/proc/net/tcp");
  EXPECT_NE(tcp.find("0100007F:" + std::string(port_hex) + " 00000000:0000 0A"), std::string::npos);  // LISTEN
  EXPECT_EQ(tcp.find("00000000:" + std::string(port_hex) + " 00000000:0000 0A"), std::string::npos);
}

TEST(Serve, RunAnswersTheCliStepTimeAndAnEditChangesItToTheCliNumber) {
  Server s;
  ASSERT_GT(s.port(), 0);
  for (int tp : {1, 2}) {
    const std::string r = post(s.port(), "/api/run", default_request(tp).dump());
    ASSERT_EQ(status_of(r), 200) << r.substr(0, 400);
    const Json d = body_of(r);
    EXPECT_EQ(d["summary"]["step_time_ms"].get<double>(), cli_step_time_ms(tp)) << "tp " << tp;
    EXPECT_TRUE(d.contains("timeline") && d.contains("memory"));
    // ranks.json's slowest-ranks view, as the report draws it: one rank per stage, the latest first.
    ASSERT_TRUE(d.contains("ranks"));
    EXPECT_EQ(d["ranks"]["ranks"].get<size_t>(), d["summary"]["stages"].size()) << "tp " << tp;
    EXPECT_EQ(d["ranks"]["slowest"][0]["rank"], d["ranks"]["slowest_rank"]) << "tp " << tp;
  }
  Json bad = default_request(3);
  const std::string r = post(s.port(), "/api/run", bad.dump());
  EXPECT_EQ(status_of(r), 400);
  EXPECT_EQ(body_of(r)["error"].get<std::string>().rfind("scenario.json: /strategy/world_size: 8 is not a multiple", 0), 0u)
      << r;
}

TEST(Serve, ReadsNoFileOutsideTheServedFolders) {
  const fs::path root = scratch("root") / "models";
  fs::create_directories(root);
  std::ofstream(root / "ok.json") << "{}";
  std::ofstream(root.parent_path() / "secret.json") << "{\"secret\": 1}";
  fs::create_symlink(root.parent_path() / "secret.json", root / "link.json");
  Server s({"--root", root.string()});
  ASSERT_GT(s.port(), 0);
  EXPECT_EQ(status_of(get(s.port(), "/api/file?path=models/ok.json")), 200);
  for (const char* p : {"models/../secret.json", "models/link.json", "/etc/passwd", "models/%2e%2e/secret.json",
                        "models//..//secret.json", "secret.json", "models/ok.json%00.txt", "models", "../models/ok.json"}) {
    const std::string r = get(s.port(), std::string("/api/file?path=") + p);
    EXPECT_EQ(status_of(r), 404) << p;
    EXPECT_EQ(r.find("secret\""), std::string::npos) << p;
  }
  EXPECT_EQ(get(s.port(), "/api/files").find("link.json"), std::string::npos);
  // A request naming a file instead of an inline object is refused before anything is read.
  Json req = default_request(1);
  req["model"] = (root.parent_path() / "secret.json").string();
  const std::string r = post(s.port(), "/api/run", req.dump());
  EXPECT_EQ(status_of(r), 400);
  EXPECT_NE(r.find("request: /model: expected an object (file paths are not accepted)"), std::string::npos) << r;
}

TEST(Serve, SurvivesAThousandMalformedRequestsWithoutGrowing) {
  Server s;
  ASSERT_GT(s.port(), 0);
  const std::string big_header = "GET / HTTP/1.1\r\nX-Big: " + std::string(20000, 'a') + "\r\n\r\n";
  const std::vector<std::string> kinds = {
      "garbage\r\n\r\n",
      std::string("\x00\xff\x10\x80 / HTTP/1.1\r\n\r\n", 18),
      "GET /" + std::string(10000, 'x') + " HTTP/1.1\r\n\r\n",
      big_header,
      "POST /api/run HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 99999999\r\n\r\n{",
      "POST /api/run HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\n{\"a\"",
      "POST /api/run HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: -3\r\n\r\n",
      "POST /api/run HTTP/1.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n",
      "POST /api/run HTTP/1.1\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\n{}",
      "POST /api/run HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n[]",
      "POST /api/run HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 44\r\n\r\n{\"model\":{},\"strategy\":{},\"system\":{},\"x\":1}",
      "POST /api/run HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 38\r\n\r\n{\"model\":{},\"strategy\":{},\"system\":{}}",
      "GET /api/file?path=../../etc/passwd HTTP/1.1\r\n\r\n",
      "GET /api/file?path=%ZZ HTTP/1.1\r\n\r\n",
      "BREW /coffee HTTP/1.1\r\n\r\n",
      "GET / HTTP/9.9\r\n\r\n",
      "GET /api/files HTTP/1.1\r\nHost: " + std::string(3000, 'h') + "\r\n",
      "POST /api/search?world_size=-1 HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
      "POST /api/compare?real=../../etc/passwd HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
      "POST /api/download?file=../x HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
      "GET /api/search?wait_ms=99999999999999 HTTP/1.1\r\n\r\n",
      "GET /api/search/file?name=/etc/passwd HTTP/1.1\r\n\r\n",
  };
  const std::string deep = std::string(100000, '[');
  auto send_batch = [&](int count, int offset) {
    for (int i = 0; i < count; ++i) {
      const int k = (i + offset) % static_cast<int>(kinds.size() + 1);
      if (k == static_cast<int>(kinds.size())) post(s.port(), "/api/run", deep);  // nesting the parser must refuse
      else send_raw(s.port(), kinds[static_cast<size_t>(k)], i % 10 != 0, 300);
    }
  };
  send_batch(100, 0);
  const long rss_before = s.rss_kib();
  send_batch(900, 100);
  ASSERT_TRUE(s.alive());
  const long rss_after = s.rss_kib();
  std::cout << "server RSS after 100 malformed requests " << rss_before << " KiB, after 1000 " << rss_after << " KiB\n";
  EXPECT_LT(rss_after - rss_before, 16 * 1024) << rss_before << " KiB -> " << rss_after << " KiB";
  const std::string r = post(s.port(), "/api/run", default_request(1).dump());
  EXPECT_EQ(status_of(r), 200);
}

TEST(Serve, DownloadsAreTheBytesRunWritesForTheDownloadedScenario) {
  Server s;
  ASSERT_GT(s.port(), 0);
  const std::string req = default_request(1).dump();
  const fs::path dir = scratch("downloads");
  const std::string scenario = post(s.port(), "/api/download?file=scenario.json", req);
  ASSERT_EQ(status_of(scenario), 200) << scenario.substr(0, 300);
  EXPECT_NE(scenario.find("Content-Disposition: attachment; filename=\"scenario.json\""), std::string::npos);
  std::ofstream(dir / "scenario.json") << body_text(scenario);
  const CliResult r = run_cli({"run", (dir / "scenario.json").string(), "--trace", "--memory", "--simumax-outputs", "--html",
                               "-q", "-o", (dir / "run").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* file : {"summary.json", "ranks.json", "trace.json", "memory_timeline.json", "memory_snapshot.json",
                           "memory_snapshot.pickle", "compute_result.json", "mem_result.json", "base_info.json",
                           "net_info.json", "simu_memory_result.json", "simu_memory_snapshot.json", "tracing_logs.json"}) {
    const std::string got = post(s.port(), std::string("/api/download?file=") + file, req);
    ASSERT_EQ(status_of(got), 200) << file;
    EXPECT_EQ(body_text(got), read_file(dir / "run" / file)) << file;
  }
  // The report is of a folder of another name (the title says so): the same page otherwise.
  const std::string page = post(s.port(), "/api/download?file=report.html", req);
  ASSERT_EQ(status_of(page), 200);
  EXPECT_NE(page.find("Content-Type: text/html"), std::string::npos);
  EXPECT_NE(body_text(page).find("function drawTimeline"), std::string::npos);
  for (const char* bad : {"../summary.json", "links.json", "", "summary.json%00"}) {
    const std::string got = post(s.port(), std::string("/api/download?file=") + bad, req);
    EXPECT_EQ(status_of(got), 400) << bad;
    EXPECT_NE(got.find("file: expected one of scenario.json, summary.json"), std::string::npos) << bad;
  }
}

TEST(Serve, CompareRunsOursAgainstARealRunUnderTheServedFoldersOnly) {
  Server s({"--root", "models", "--root", "platforms", "--root", "scenarios", "--root", "tests/data/compare"});
  ASSERT_GT(s.port(), 0);
  const std::string list = get(s.port(), "/api/real-runs");
  EXPECT_NE(list.find("\"compare/ranks/rank0.json\""), std::string::npos);
  EXPECT_NE(list.find("\"compare/megatron_sample.log\""), std::string::npos);
  const std::string r = post(s.port(), "/api/compare?real=compare/ranks/rank0.json", default_request(1).dump());
  ASSERT_EQ(status_of(r), 200) << r.substr(0, 400);
  const Json d = body_of(r);
  // The CLI's compare of the same run (op granularity) against the same trace.
  const fs::path dir = scratch("compare-cli");
  ASSERT_EQ(post(s.port(), "/api/download?file=scenario.json", default_request(1).dump()).empty(), false);
  std::ofstream(dir / "s.json") << body_text(post(s.port(), "/api/download?file=scenario.json", default_request(1).dump()));
  ASSERT_EQ(run_cli({"run", (dir / "s.json").string(), "--trace", "--granularity", "op", "-q", "-o", (dir / "o").string()})
                .exit_code, 0);
  ASSERT_EQ(run_cli({"compare", (dir / "o").string(), "tests/data/compare/ranks/rank0.json", "-q", "--json",
                     (dir / "c.json").string()}).exit_code, 0);
  const Json cli = Json::parse(read_file(dir / "c.json"));
  EXPECT_EQ(d["compare"]["metrics"]["time"][0]["ours"], cli["comparison"].back()["metrics"]["total_ms"]["ours"]);
  EXPECT_EQ(d["compare"]["metrics"]["time"][0]["real"], cli["comparison"].back()["metrics"]["total_ms"]["real"]);
  EXPECT_EQ(d["compare"]["ops"].size(), cli["ops"].size());
  for (const char* bad : {"compare/../../README.md", "/etc/passwd", "models/llama3-70b.jsonx", "compare/ranks",
                          "compare/missing.json"}) {
    EXPECT_EQ(status_of(post(s.port(), std::string("/api/compare?real=") + bad, default_request(1).dump())), 404) << bad;
  }
  // A config is not a trace: compare's own message, 400.
  const std::string not_trace = post(s.port(), "/api/compare?real=models/llama3-70b.json", default_request(1).dump());
  EXPECT_EQ(status_of(not_trace), 400) << not_trace.substr(0, 300);
}

TEST(Serve, SearchRunsInTheBackgroundWithProgressGivesTheCliCandidatesAndCanBeCancelled) {
  Server s;
  ASSERT_GT(s.port(), 0);
  const Json req = default_request(1);
  const std::string query = "/api/search?world_size=16&global_batch_size=64&seq_len=4096";
  const std::string started = post(s.port(), query, req.dump());
  ASSERT_EQ(status_of(started), 202) << started.substr(0, 300);
  const Json st = wait_for_search(s.port());
  ASSERT_EQ(st["state"], "done") << st.dump().substr(0, 300);
  EXPECT_EQ(st["done"], st["total"]);
  EXPECT_GT(st["total"].get<int>(), 0);
  // The CLI's search of the same model, system and base strategy: the same candidates, byte for byte.
  const fs::path dir = scratch("search-cli");
  std::ofstream(dir / "model.json") << req["model"].dump();
  std::ofstream(dir / "system.json") << req["system"].dump();
  std::ofstream(dir / "strategy.json") << req["strategy"].dump();
  const CliResult cli = run_cli({"search", "--model", (dir / "model.json").string(), "--system", (dir / "system.json").string(),
                                 "--strategy", (dir / "strategy.json").string(), "--world-size", "16", "--global-batch-size",
                                 "64", "--seq-len", "4096", "-q", "-o", (dir / "out").string()});
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_EQ(st["result"]["search"]["candidates"].size(),
            Json::parse(read_file(dir / "out" / "search.json"))["evaluated"].get<size_t>());
  const std::string csv = get(s.port(), "/api/search/file?name=search.csv");
  ASSERT_EQ(status_of(csv), 200);
  EXPECT_EQ(body_text(csv), read_file(dir / "out" / "search.csv"));
  EXPECT_EQ(status_of(get(s.port(), "/api/search/file?name=best_scenario.json")), 404);
  // Bad parameters are refused before anything starts.
  EXPECT_EQ(status_of(post(s.port(), "/api/search?world_size=0&global_batch_size=64", req.dump())), 400);
  EXPECT_NE(post(s.port(), "/api/search?world_size=16&global_batch_size=64&tpp=2", req.dump()).find("unknown parameter 'tpp'"),
            std::string::npos);
  EXPECT_NE(post(s.port(), "/api/search?world_size=16&global_batch_size=64&tp=x", req.dump()).find("--tp"), std::string::npos);
  // Cancelled at once: the state says so, and a new search may start.
  const std::string big = "/api/search?world_size=4096&global_batch_size=4096&seq_len=4096&mbs=auto&vpp=1,2,4&cp=1,2,4&zero=0,1,2,3";
  ASSERT_EQ(status_of(post(s.port(), big, req.dump())), 202);
  EXPECT_EQ(status_of(post(s.port(), big, req.dump())), 400);  // one at a time
  EXPECT_EQ(body_of(post(s.port(), "/api/search/cancel", ""))["cancelled"], true);
  EXPECT_EQ(wait_for_search(s.port())["state"], "cancelled");
  EXPECT_EQ(body_of(post(s.port(), "/api/search/cancel", ""))["cancelled"], false);
  ASSERT_EQ(status_of(post(s.port(), query, req.dump())), 202);
  EXPECT_EQ(wait_for_search(s.port())["state"], "done");
  ASSERT_TRUE(s.alive());
}

}  // namespace
}  // namespace simumax::tests::serve
