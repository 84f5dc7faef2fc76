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

}  // namespace
}  // namespace simumax::tests
