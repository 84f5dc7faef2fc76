// The HTTP client side of the serve tests: the server as a child process on a free port, raw requests and the
// answers' parts, the default request (what the app posts) and the CLI's numbers for it, the app in Chromium.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/cli_runner.hpp"

namespace simumax::tests::serve {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// A fresh folder under the temp directory, named after `name` and this process.
fs::path scratch(const std::string& name);

// The server as a child process on a free port (`serve --port 0` plus `extra`), stopped when the test ends.
class Server {
 public:
  explicit Server(std::vector<std::string> extra = {});
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  int port() const { return port_; }  // 0 when it did not start
  pid_t pid() const { return pid_; }
  bool alive() const;
  long rss_kib() const;  // its resident memory, -1 when unknown
  int stop_with(int sig);  // sends `sig`, waits for the exit and returns waitpid's status

 private:
  fs::path out_;
  pid_t pid_ = -1;
  int port_ = 0;
};

// Sends `raw` on a new connection to 127.0.0.1:port and returns what comes back before the server closes it
// (or `wait_ms` pass). `half_close`: shut our side after sending.
std::string send_raw(int port, const std::string& raw, bool half_close, int wait_ms = 5000);
std::string post(int port, const std::string& path, const std::string& body, const std::string& type = "application/json");
std::string get(int port, const std::string& target);
int status_of(const std::string& response);
Json body_of(const std::string& response);
std::string body_text(const std::string& response);
// The default scenario with its model and system inline (what the app posts), tp_size as given.
Json default_request(int tp);
double cli_step_time_ms(int tp);
// Polls GET /api/search until the search is no longer running (at most ~60 s).
Json wait_for_search(int port);
// The app's page at `hash` in headless Chromium (the hash presses the buttons, see web/app.js): its DOM, and a
// screenshot under `shot` when given, in a window of `window` ("width,height" px; the screenshot is that size).
std::string app_dom(int port, const std::string& hash, const std::string& shot = "",
                    const std::string& window = "1300,3000");
// The value of attribute `name` of the first tag matching `tag_regex`.
std::string tag_attr(const std::string& dom, const std::string& tag_regex, const std::string& name);
// The CLI's result for a request written as a scenario file: exit code, stderr and (when it ran) summary.json.
CliResult cli_run_of(const Json& request, const std::string& name, Json* summary);

}  // namespace simumax::tests::serve
