// simumax-sim serve: a local web app (127.0.0.1 only) to pick a model, a strategy and a system, edit any field
// and see the step time, the fit verdict, the memory and the timeline update (docs/report.md).
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <sstream>

#include <httplib.h>

#include "engine/common/error.hpp"
#include "engine/report/html_report.hpp"
#include "engine/report/json_text.hpp"
#include "engine/report/serve_request.hpp"
#include "engine/report/summary.hpp"
#include "engine/report/text_file.hpp"
#include "engine/simulate.hpp"
#include "tools/commands.hpp"
#include "tools/run_outputs.hpp"
#include "tools/serve_paths.hpp"

namespace simumax::tools {

namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxBodyBytes = 4u << 20;  // a system file with its efficiency tables is ~50 kB

struct ServeArgs {
  int port = 8765;
  std::vector<std::string> roots = {"models", "platforms", "scenarios"};
};

std::string error_json(const std::string& message) { return "{\"error\":" + report::quoted(message) + "}"; }

// A scratch folder for one run, removed when done (the run's files are only read back into the answer).
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = (fs::temp_directory_path() / "simumax-serve-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw common::InternalError("cannot create a temporary folder");
    path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// One run of the fast executor on the request's scenario: the report page's data (summary, timeline, memory).
// The scenario is written to a scratch folder because the config loader reads files; every message that names
// it is given back as "scenario.json: <pointer>: ..." (a UsageError: the pointer is already in the text).
std::string run_request(const std::string& body) {
  const std::string scenario = report::inline_scenario_text(body);
  ScratchDir dir;
  const std::string file = dir.path() + "/scenario.json";
  try {
    report::write_file_atomically(file, scenario);
    config::Scenario s = config::load_scenario(file);
    const RunResult r = simulate(s, RunOptions{});
    report::write_file_atomically(dir.path() + "/summary.json", report::summary_json(r.summary));
    OutputArgs outputs;
    outputs.trace = true;
    outputs.memory = true;
    write_outputs(dir.path(), s, r, outputs);
    return report::report_data_json(dir.path(), report::HtmlReportOptions{});
  } catch (const common::ConfigError& e) {
    std::string what = e.what();
    if (what.rfind(dir.path() + "/", 0) == 0) what = what.substr(dir.path().size() + 1);
    throw common::UsageError(what);
  }
}

void serve(const ServeArgs& a) {
  const ServeRoots roots = make_serve_roots(a.roots);
  httplib::Server server;
  std::mutex run_mutex;  // the engine's loggers and caches are not meant for concurrent runs
  server.set_payload_max_length(kMaxBodyBytes);
  server.set_read_timeout(5, 0);
  server.set_write_timeout(5, 0);
  server.set_keep_alive_max_count(20);
  const std::string page = report::html_app_page();
  server.Get("/", [&](const httplib::Request&, httplib::Response& res) { res.set_content(page, "text/html; charset=utf-8"); });
  server.Get("/api/files", [&](const httplib::Request&, httplib::Response& res) {
    std::string out = "{\"files\":[";
    const std::vector<std::string> files = list_serve_files(roots);
    for (size_t i = 0; i < files.size(); ++i) out += (i ? "," : "") + report::quoted(files[i]);
    res.set_content(out + "]}", "application/json");
  });
  server.Get("/api/file", [&](const httplib::Request& req, httplib::Response& res) {
    const std::optional<std::string> path = req.has_param("path") ? resolve_serve_file(roots, req.get_param_value("path"))
                                                                   : std::nullopt;
    if (!path) {
      res.status = 404;
      res.set_content(error_json("no such file under the served folders"), "application/json");
      return;
    }
    std::ifstream in(*path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    res.set_content(text.str(), "application/json");
  });
  server.Post("/api/run", [&](const httplib::Request& req, httplib::Response& res) {
    if (req.get_header_value("Content-Type").rfind("application/json", 0) != 0) {
      res.status = 415;
      res.set_content(error_json("expected Content-Type: application/json"), "application/json");
      return;
    }
    try {
      std::lock_guard<std::mutex> lock(run_mutex);
      res.set_content(run_request(req.body), "application/json");
    } catch (const common::ConfigError& e) {
      res.status = 400;
      res.set_content(error_json(e.what()), "application/json");
    } catch (const common::UsageError& e) {
      res.status = 400;
      res.set_content(error_json(e.what()), "application/json");
    } catch (const std::exception& e) {
      res.status = 500;
      res.set_content(error_json(std::string("internal error: ") + e.what()), "application/json");
    }
  });
  server.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.body.empty()) res.set_content(error_json("HTTP " + std::to_string(res.status)), "application/json");
  });
  const int port = a.port == 0 ? server.bind_to_any_port("127.0.0.1") : (server.bind_to_port("127.0.0.1", a.port) ? a.port : -1);
  if (port < 0) throw common::UsageError("--port " + std::to_string(a.port) + ": cannot listen on 127.0.0.1 (in use?)");
  std::cout << "listening on http://127.0.0.1:" << port << "/ (Ctrl-C stops)" << std::endl;
  if (!server.listen_after_bind()) throw common::InternalError("the HTTP server stopped");
}

}  // namespace

std::function<int()> add_serve(CLI::App& app) {
  auto a = std::make_shared<ServeArgs>();
  CLI::App* sub = app.add_subcommand("serve", "a local web app: pick and edit configs, see time and memory update");
  sub->add_option("--port", a->port, "TCP port on 127.0.0.1 (0: any free port, printed)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  sub->add_option("--root", a->roots, "folders whose *.json files the app may read (repeat); nothing else is served")
      ->capture_default_str();
  sub->footer("Binds 127.0.0.1 only. POST /api/run takes {\"model\": {...}, \"strategy\": {...}, \"system\": {...}} "
              "(inline objects, at most 4 MiB) and answers the report page's data, or {\"error\": ...} with the "
              "message the CLI prints.");
  return [sub, a]() {
    if (!sub->parsed()) return -1;
    serve(*a);
    return 0;
  };
}

}  // namespace simumax::tools
