// The HTTP client side of the serve tests (tests/serve_test.cpp, tests/serve_app_test.cpp): the server as a child
// process, raw requests, the default request and the CLI's numbers for it, and the app in headless Chromium.
#include "tests/serve_client.hpp"
#include "tests/scratch_dir.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <regex>
#include <thread>

#include <gtest/gtest.h>

namespace simumax::tests::serve {

fs::path scratch(const std::string& name) { return scratch_dir("serve-test", name); }

Server::Server(std::vector<std::string> extra) {
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

Server::~Server() {
  if (pid_ <= 0) return;  // never kill(-1): that signals every process of the user
  kill(pid_, SIGTERM);
  waitpid(pid_, nullptr, 0);
}

int Server::stop_with(int sig) {
  int status = -1;
  if (pid_ > 0 && kill(pid_, sig) == 0) waitpid(pid_, &status, 0);
  pid_ = -1;
  return status;
}

bool Server::alive() const { return waitpid(pid_, nullptr, WNOHANG) == 0; }

long Server::rss_kib() const {
  std::ifstream in("/proc/" + std::to_string(pid_) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

// Sends `raw` on a new connection to 127.0.0.1:port and returns what comes back before the server closes it
// (or `wait_ms` pass). `half_close`: shut our side after sending (the server then answers nothing: a malformed
// request that also hangs up).
std::string send_raw(int port, const std::string& raw, bool half_close, int wait_ms) {
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

std::string post(int port, const std::string& path, const std::string& body, const std::string& type) {
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

std::string body_text(const std::string& response) { return response.substr(response.find("\r\n\r\n") + 4); }


// Polls GET /api/search until the search is no longer running (at most ~60 s).
Json wait_for_search(int port) {
  Json st;
  for (int i = 0; i < 60; ++i) {
    st = body_of(get(port, "/api/search?wait_ms=1000"));
    if (st["state"] != "running") break;
  }
  return st;
}

// The app's page at `hash` in headless Chromium (the hash presses the buttons, see web/app.js): its DOM, and a
// screenshot under `shot` when given, in a window of `window` px.
std::string app_dom(int port, const std::string& hash, const std::string& shot, const std::string& window) {
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
                             " --virtual-time-budget=30000 --window-size=" + window + " ";
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

// The CLI's result for the default request with `edit` applied: exit code, stderr and summary.json.
CliResult cli_run_of(const Json& request, const std::string& name, Json* summary) {
  const fs::path dir = scratch("cli-" + name);
  std::ofstream(dir / "scenario.json") << request.dump();
  const CliResult r = run_cli({"run", (dir / "scenario.json").string(), "-q", "-o", (dir / "out").string()});
  if (summary && r.exit_code == 0) *summary = Json::parse(read_file(dir / "out" / "summary.json"));
  return r;
}

}  // namespace simumax::tests::serve
