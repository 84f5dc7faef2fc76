// `simumax-sim serve` (issue #17): loopback only, the CLI's numbers for an edited config, no file outside the
// served folders, 1,000 malformed requests survived without crashing or growing, and the app in headless Chromium.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/cli_runner.hpp"

namespace simumax::tests {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

fs::path scratch(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("simumax-serve-test-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

// The server as a child process on a free port, stopped when the test ends.
class Server {
 public:
  explicit Server(std::vector<std::string> extra = {}) {
    out_ = scratch("server") / "stdout";
    pid_ = fork();
    if (pid_ == 0) {
      if (!std::freopen(out_.c_str(), "w", stdout)) _exit(126);
      // One malloc arena: otherwise each of the server's worker threads grows its own arena the first time it
      // takes a request, which under a loaded machine reads as growth without being a leak.
      setenv("MALLOC_ARENA_MAX", "1", 1);
      std::vector<std::string> args = {SIMUMAX_CLI, "serve", "--port", "0"};
      args.insert(args.end(), extra.begin(), extra.end());
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(SIMUMAX_CLI, argv.data());
      _exit(127);
    }
    for (int i = 0; i < 200 && port_ == 0; ++i) {
      std::smatch m;
      const std::string text = read_file(out_);
      if (std::regex_search(text, m, std::regex("127\\.0\\.0\\.1:([0-9]+)/"))) port_ = std::stoi(m[1]);
      else std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ~Server() {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  bool alive() const { return waitpid(pid_, nullptr, WNOHANG) == 0; }
  long rss_kib() const {
    std::ifstream in("/proc/" + std::to_string(pid_) + "/status");
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
    }
    return -1;
  }

 private:
  fs::path out_;
  pid_t pid_ = -1;
  int port_ = 0;
};

// Sends `raw` on a new connection to 127.0.0.1:port and returns what comes back before the server closes it
// (or `wait_ms` pass). `half_close`: shut our side after sending (the server then answers nothing: a malformed
// request that also hangs up).
std::string send_raw(int port, const std::string& raw, bool half_close, int wait_ms = 5000) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return "<connect failed>";
  }
  timeval tv{wait_ms / 1000, (wait_ms % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  for (size_t sent = 0; sent < raw.size();) {
    const ssize_t n = send(fd, raw.data() + sent, raw.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  if (half_close) shutdown(fd, SHUT_WR);
  std::string got;
  char buf[65536];
  for (ssize_t n; (n = recv(fd, buf, sizeof buf, 0)) > 0;) got.append(buf, static_cast<size_t>(n));
  close(fd);
  return got;
}

std::string post(int port, const std::string& path, const std::string& body, const std::string& type = "application/json") {
  return send_raw(port, "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: " + type +
                            "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body,
                  false);
}

std::string get(int port, const std::string& target) {
  return send_raw(port, "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", false);
}

int status_of(const std::string& response) {
  return response.rfind("HTTP/1.1 ", 0) == 0 ? std::stoi(response.substr(9, 3)) : -1;
}

Json body_of(const std::string& response) { return Json::parse(response.substr(response.find("\r\n\r\n") + 4)); }

// The default scenario with its model and system inline (what the app posts), tp_size as given.
Json default_request(int tp) {
  Json sc = Json::parse(read_file("scenarios/default.json"));
  Json model = Json::parse(read_file("models/llama3-70b.json"));
  model.update(sc["model_overrides"]);
  sc["strategy"]["tp_size"] = tp;
  return {{"name", sc["name"]}, {"model", model}, {"strategy", sc["strategy"]},
          {"system", Json::parse(read_file("platforms/b200_bf16.json"))}};
}

double cli_step_time_ms(int tp) {
  const fs::path dir = scratch("cli-tp" + std::to_string(tp));
  Json sc = Json::parse(read_file("scenarios/default.json"));
  sc["model"] = fs::absolute("models/llama3-70b.json").string();
  sc["system"] = fs::absolute("platforms/b200_bf16.json").string();
  sc["strategy_overrides"] = {{"tp_size", tp}};
  std::ofstream(dir / "s.json") << sc.dump();
  const CliResult r = run_cli({"run", (dir / "s.json").string(), "-q", "-o", (dir / "out").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return Json::parse(read_file(dir / "out" / "summary.json"))["step_time_ms"];
}

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

std::string body_text(const std::string& response) { return response.substr(response.find("\r\n\r\n") + 4); }

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
  for (const char* file : {"summary.json", "trace.json", "memory_timeline.json", "memory_snapshot.json",
                           "memory_snapshot.pickle", "compute_result.json", "mem_result.json", "base_info.json",
                           "simu_memory_result.json", "simu_memory_snapshot.json", "tracing_logs.json"}) {
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

// Polls GET /api/search until the search is no longer running (at most ~60 s).
Json wait_for_search(int port) {
  Json st;
  for (int i = 0; i < 60; ++i) {
    st = body_of(get(port, "/api/search?wait_ms=1000"));
    if (st["state"] != "running") break;
  }
  return st;
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

// The app in headless Chromium: the form loads the default scenario, the edit in the URL (#strategy.tp_size=2,
// typed into the tp_size field on load) is posted, and the headline shows the CLI's step time for tp 2.
TEST(Serve, AppInChromiumShowsTheCliNumberAfterAnEdit) {
  std::string chromium;
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (access(p, X_OK) == 0) chromium = p;
  }
  if (const char* env = std::getenv("SIMUMAX_CHROMIUM"); env && *env) chromium = env;
  ASSERT_FALSE(chromium.empty()) << "chromium is not installed: run tools/install-deps.sh (never skipped)";
  Server s;
  ASSERT_GT(s.port(), 0);
  const fs::path dir = scratch("chromium");
  const std::string url = "http://127.0.0.1:" + std::to_string(s.port()) + "/#strategy.tp_size=2";
  const std::string common = chromium + " --headless=new --no-sandbox --disable-gpu --no-first-run --user-data-dir=" +
                             (dir / "profile").string() + " --virtual-time-budget=10000 --window-size=1300,1800 ";
  ASSERT_EQ(std::system((common + "--dump-dom '" + url + "' > " + (dir / "dom.html").string() + " 2>/dev/null").c_str()), 0);
  const std::string dom = read_file(dir / "dom.html");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(dom, m, std::regex("<p id=\"app-headline\"[^>]*data-step-time-ms=\"([^\"]+)\"[^>]*data-update-ms=\"([0-9]+)\"")))
      << dom.substr(0, 2000);
  EXPECT_EQ(std::stod(m[1]), cli_step_time_ms(2));
  std::cout << "edit to numbers on screen: " << m[2] << " ms\n";
  const fs::path shot = fs::path(SIMUMAX_SCREENSHOT_DIR) / "serve_app.png";
  fs::create_directories(shot.parent_path());
  ASSERT_EQ(std::system((common + "--screenshot=" + shot.string() + " '" + url + "' > /dev/null 2>&1").c_str()), 0);
  EXPECT_TRUE(fs::is_regular_file(shot));
  std::cout << "screenshot: " << shot.string() << "\n";
}

// The app's page at `hash` in headless Chromium (the hash presses the buttons, see web/app.js): its DOM, and a
// screenshot under `shot` when given.
std::string app_dom(int port, const std::string& hash, const std::string& shot = "") {
  std::string chromium;
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (access(p, X_OK) == 0) chromium = p;
  }
  if (const char* env = std::getenv("SIMUMAX_CHROMIUM"); env && *env) chromium = env;
  EXPECT_FALSE(chromium.empty()) << "chromium is not installed: run tools/install-deps.sh (never skipped)";
  const fs::path dir = scratch("app-chromium");
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/#" + hash;
  // A bound on each browser run: a hung Chromium fails the test instead of stalling the suite.
  const std::string common = "timeout 120 " + chromium + " --headless=new --no-sandbox --disable-gpu --no-first-run " +
                             "--user-data-dir=" + (dir / "profile").string() +
                             " --virtual-time-budget=30000 --window-size=1300,3000 ";
  EXPECT_EQ(std::system((common + "--dump-dom '" + url + "' > " + (dir / "dom.html").string() + " 2>/dev/null").c_str()), 0);
  if (!shot.empty()) {
    const fs::path path = fs::path(SIMUMAX_SCREENSHOT_DIR) / shot;
    fs::create_directories(path.parent_path());
    EXPECT_EQ(std::system((common + "--screenshot=" + path.string() + " '" + url + "' > /dev/null 2>&1").c_str()), 0);
    std::cout << "screenshot: " << path.string() << "\n";
  }
  return read_file(dir / "dom.html");
}

std::string tag_attr(const std::string& dom, const std::string& tag_regex, const std::string& name) {
  std::smatch m, a;
  if (!std::regex_search(dom, m, std::regex(tag_regex))) return "<no tag>";
  const std::string tag = m.str();
  return std::regex_search(tag, a, std::regex(" " + name + "=\"([^\"]*)\"")) ? a[1].str() : "<no attribute>";
}

TEST(Serve, AppInChromiumComparesSearchesWithAProgressBarAndDownloads) {
  Server s({"--root", "models", "--root", "platforms", "--root", "scenarios", "--root", "tests/data/compare"});
  ASSERT_GT(s.port(), 0);
  const std::string req = default_request(1).dump();
  // Compare with a real trace under the served folders: the report's compare view, with the server's numbers.
  std::string dom = app_dom(s.port(), "real=compare/ranks/rank0.json&do=compare", "serve_compare.png");
  const Json cmp = body_of(post(s.port(), "/api/compare?real=compare/ranks/rank0.json", req))["compare"];
  EXPECT_EQ(tag_attr(dom, "<section id=\"compare\"[^>]*>", "data-ops"), std::to_string(cmp["ops"].size()));
  EXPECT_DOUBLE_EQ(std::stod(tag_attr(dom, "<rect[^>]*data-metric=\"total_ms\" data-side=\"real\"[^>]*>", "data-value")),
                   cmp["metrics"]["time"][0]["real"].get<double>());
  // A search: the progress bar ends full, and the scatter has every candidate the server evaluated.
  dom = app_dom(s.port(), "search.world_size=16&search.global_batch_size=64&search.seq_len=4096&do=search",
                "serve_search.png");
  const std::string bar = "<progress id=\"search-progress\"[^>]*>";
  EXPECT_EQ(tag_attr(dom, bar, "data-state"), "done");
  EXPECT_EQ(tag_attr(dom, bar, "data-done"), tag_attr(dom, bar, "data-total"));
  const Json st = body_of(get(s.port(), "/api/search"));
  ASSERT_EQ(st["state"], "done");
  EXPECT_EQ(tag_attr(dom, "<section id=\"search\"[^>]*>", "data-candidates"),
            std::to_string(st["result"]["search"]["candidates"].size()));
  EXPECT_EQ(tag_attr(dom, bar, "data-total"), std::to_string(st["total"].get<int>()));
  EXPECT_NE(dom.find("class=\"search-file\""), std::string::npos);
  // A download from the page: the bytes the server gives for these configs.
  for (const char* file : {"summary.json", "memory_snapshot.pickle"}) {
    dom = app_dom(s.port(), std::string("do=download:") + file);
    const std::string button = "<button id=\"download\"[^>]*>";
    EXPECT_EQ(tag_attr(dom, button, "data-state"), "done") << file;
    EXPECT_EQ(tag_attr(dom, button, "data-last-file"), file);
    EXPECT_EQ(tag_attr(dom, button, "data-last-bytes"),
              std::to_string(body_text(post(s.port(), std::string("/api/download?file=") + file, req)).size()));
  }
}

// The CLI's result for the default request with `edit` applied: exit code, stderr and summary.json.
CliResult cli_run_of(const Json& request, const std::string& name, Json* summary) {
  const fs::path dir = scratch("cli-" + name);
  std::ofstream(dir / "scenario.json") << request.dump();
  const CliResult r = run_cli({"run", (dir / "scenario.json").string(), "-q", "-o", (dir / "out").string()});
  if (summary && r.exit_code == 0) *summary = Json::parse(read_file(dir / "out" / "summary.json"));
  return r;
}

TEST(Serve, AppFormIsBuiltFromTheReadersSchemaWithNestedFieldsAndTheCliErrors) {
  Server s;
  ASSERT_GT(s.port(), 0);
  const Json schema = body_of(post(s.port(), "/api/schema", default_request(1).dump()));
  EXPECT_EQ(schema["/strategy/tp_size"]["kind"], "integer");
  EXPECT_EQ(schema["/system/accelerator/mem_gbs"]["kind"], "number");
  EXPECT_EQ(schema["/strategy/fidelity"]["choices"], Json::array({"megatron", "simumax"}));
  EXPECT_FALSE(default_request(1)["strategy"].contains("fidelity"));  // known to the readers, absent from the file
  // A nested field made invalid: the message next to it is the CLI's, word for word.
  std::string dom = app_dom(s.port(), "system.accelerator.mem_gbs=-1");
  Json bad = default_request(1);
  bad["system"]["accelerator"]["mem_gbs"] = -1;
  const CliResult cli_bad = cli_run_of(bad, "bad", nullptr);
  ASSERT_EQ(cli_bad.exit_code, 2);
  const std::string cli_message = cli_bad.err.substr(cli_bad.err.find("scenario.json: "));
  EXPECT_EQ(tag_attr(dom, "<span[^>]*data-error=\"[^\"]*\"[^>]*>", "data-error") + "\n", cli_message);
  EXPECT_NE(dom.find("<details class=\"nested\" data-pointer=\"/system/accelerator\""), std::string::npos);
  // A nested edit and a field the file does not have: the CLI's step time and fit verdicts.
  dom = app_dom(s.port(), "system.accelerator.mem_gbs=40&strategy.fidelity=simumax", "serve_schema_form.png");
  Json edited = default_request(1);
  edited["system"]["accelerator"]["mem_gbs"] = 40;
  edited["strategy"]["fidelity"] = "simumax";
  Json summary;
  ASSERT_EQ(cli_run_of(edited, "edited", &summary).exit_code, 0);
  EXPECT_EQ(std::stod(tag_attr(dom, "<p id=\"app-headline\"[^>]*>", "data-step-time-ms")), summary["step_time_ms"].get<double>());
  for (const Json& st : summary["stages"]) {
    const std::string verdict = "<span[^>]*data-stage=\"" + std::to_string(st["stage"].get<int>()) + "\"[^>]*>";
    EXPECT_EQ(tag_attr(dom, verdict, "data-fits"), st["fits"].get<bool>() ? "true" : "false");
  }
  EXPECT_NE(dom.find("<select id=\"field-strategy-fidelity\" data-pointer=\"/strategy/fidelity\">"), std::string::npos);
}

}  // namespace
}  // namespace simumax::tests
