// simumax-sim serve: a local web app (127.0.0.1 only) to pick a model, a strategy and a system, edit any field
// and see the step time, the fit verdict, the memory and the timeline update (docs/report.md).
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

#include <httplib.h>

#include "engine/common/error.hpp"
#include "engine/report/html_report.hpp"
#include "engine/report/json_text.hpp"
#include "tools/allocator.hpp"
#include "tools/commands.hpp"
#include "tools/serve_deadline.hpp"
#include "tools/serve_jobs.hpp"
#include "tools/serve_paths.hpp"

namespace simumax::tools {

namespace {

constexpr size_t kMaxBodyBytes = 4u << 20;  // a system file with its efficiency tables is ~50 kB
constexpr std::chrono::seconds kRequestDeadline{10};  // from a connection's first byte to its whole request
constexpr size_t kWorkers = 32;  // connections served at once (cpp-httplib's default: 8 on this machine)

struct ServeArgs {
  int port = 8765;
  std::vector<std::string> roots = {"models", "platforms", "scenarios"};
};

std::string error_json(const std::string& message) { return "{\"error\":" + report::quoted(message) + "}"; }

// A Host header naming this machine's loopback: "127.0.0.1", "localhost" or "[::1]", with or without ":port".
// A page of another site whose name it made resolve to 127.0.0.1 (DNS rebinding) sends its own name: it must not
// read the served files or start runs.
bool loopback_host(const std::string& host) {
  std::string name = host;
  if (const size_t colon = host.rfind(':'); colon != std::string::npos && host.find(']', colon) == std::string::npos) {
    const std::string port = host.substr(colon + 1);
    if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos) return false;
    name = host.substr(0, colon);
  }
  return name == "127.0.0.1" || name == "localhost" || name == "[::1]";
}

// A request from a page: its Origin header, when it has one, is this server's ("http://127.0.0.1:8765").
bool loopback_origin(const httplib::Request& req) {
  if (!req.has_header("Origin")) return true;  // not sent by a browser's cross-origin fetch
  const std::string origin = req.get_header_value("Origin");
  const std::string scheme = "http://";
  return origin.rfind(scheme, 0) == 0 && loopback_host(origin.substr(scheme.size()));
}

// SIGINT and SIGTERM are taken by a thread of their own (blocked everywhere else, before any thread starts): it
// removes the scratch folders of the requests in progress and ends the process with the shell's code.
void stop_on_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set] {
    int sig = 0;
    sigwait(&set, &sig);
    remove_scratch_dirs();
    static const char kMessage[] = "\ninterrupted\n";
    [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
    ::_exit(128 + sig);
  }).detach();
}

// A POST handler for a JSON body: the content type checked, errors as {"error": ...} with 400 (the user's input)
// or 500 (ours). Its request is in (the body too): the handler may take longer than the request deadline.
httplib::Server::Handler json_post(RequestDeadline& deadline,
                                   std::function<void(const httplib::Request&, httplib::Response&)> handle) {
  return [&deadline, handle = std::move(handle)](const httplib::Request& req, httplib::Response& res) {
    deadline.request_read(req.remote_addr, req.remote_port);
    if (req.get_header_value("Content-Type").rfind("application/json", 0) != 0) {
      res.status = 415;
      res.set_content(error_json("expected Content-Type: application/json"), "application/json");
      return;
    }
    try {
      handle(req, res);
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
  };
}

std::string list_json(const std::vector<std::string>& files) {
  std::string out = "{\"files\":[";
  for (size_t i = 0; i < files.size(); ++i) out += (i ? "," : "") + report::quoted(files[i]);
  return out + "]}";
}

const char* content_type_of(const std::string& file) {
  if (file.size() > 5 && file.compare(file.size() - 5, 5, ".html") == 0) return "text/html; charset=utf-8";
  if (file.size() > 4 && file.compare(file.size() - 4, 4, ".csv") == 0) return "text/csv";
  if (file.size() > 7 && file.compare(file.size() - 7, 7, ".pickle") == 0) return "application/octet-stream";
  return "application/json";
}

void attach(httplib::Response& res, const std::string& name, std::string bytes) {
  res.set_header("Content-Disposition", "attachment; filename=\"" + name + "\"");
  res.set_content(std::move(bytes), content_type_of(name));
}

void not_found(httplib::Response& res, const std::string& what) {
  res.status = 404;
  res.set_content(error_json(what), "application/json");
}

void serve(const ServeArgs& a) {
  const ServeRoots roots = make_serve_roots(a.roots);
  return_freed_pages_at_once();
  stop_on_signals();
  httplib::Server server;
  server.new_task_queue = [] { return new httplib::ThreadPool(kWorkers); };
  RequestDeadline deadline(kRequestDeadline);
  std::mutex run_mutex;  // the engine's loggers and caches are not meant for concurrent runs
  SearchJob search;      // its evaluators are independent of the runs' (as its own threads are of each other)
  server.set_payload_max_length(kMaxBodyBytes);
  server.set_read_timeout(5, 0);
  server.set_write_timeout(5, 0);
  server.set_keep_alive_max_count(20);
  server.set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!loopback_host(req.get_header_value("Host"))) {
      res.status = 403;
      res.set_content(error_json("Host: expected 127.0.0.1, localhost or [::1] (the server answers this machine's "
                                 "own pages only)"),
                      "application/json");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (!loopback_origin(req)) {
      res.status = 403;
      res.set_content(error_json("Origin: a page of another site may not use this server"), "application/json");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  server.set_post_routing_handler([&deadline](const httplib::Request& req, httplib::Response&) {
    deadline.answered(req.remote_addr, req.remote_port);
  });
  const std::string page = report::html_app_page();
  server.Get("/", [&](const httplib::Request&, httplib::Response& res) { res.set_content(page, "text/html; charset=utf-8"); });
  server.Get("/api/files", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(list_json(list_serve_files(roots)), "application/json");
  });
  server.Get("/api/real-runs", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(list_json(list_real_runs(roots)), "application/json");
  });
  server.Get("/api/file", [&](const httplib::Request& req, httplib::Response& res) {
    const std::optional<std::string> path = req.has_param("path") ? resolve_serve_file(roots, req.get_param_value("path"))
                                                                   : std::nullopt;
    if (!path) return not_found(res, "no such file under the served folders");
    std::ifstream in(*path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    res.set_content(text.str(), "application/json");
  });
  server.Post("/api/run", json_post(deadline, [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(run_mutex);
    res.set_content(run_request(req.body), "application/json");
  }));
  server.Post("/api/schema", json_post(deadline, [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(run_mutex);
    res.set_content(schema_request(req.body), "application/json");
  }));
  server.Post("/api/download", json_post(deadline, [&](const httplib::Request& req, httplib::Response& res) {
    const std::string file = req.get_param_value("file");
    std::lock_guard<std::mutex> lock(run_mutex);
    attach(res, file, run_file_request(req.body, file));
  }));
  server.Post("/api/compare", json_post(deadline, [&](const httplib::Request& req, httplib::Response& res) {
    const std::optional<std::string> real = resolve_real_run(roots, req.get_param_value("real"));
    if (!real) return not_found(res, "real: no such trace or log under the served folders");
    std::lock_guard<std::mutex> lock(run_mutex);
    res.set_content(compare_request(req.body, *real, default_kernel_classes()), "application/json");
  }));
  server.Post("/api/search", json_post(deadline, [&](const httplib::Request& req, httplib::Response& res) {
    std::map<std::string, std::string> params;
    for (const auto& [k, v] : req.params) params[k] = v;
    search.start(req.body, params);
    res.status = 202;
    res.set_content(search.status_json(0), "application/json");
  }));
  server.Get("/api/search", [&](const httplib::Request& req, httplib::Response& res) {
    int wait_ms = 0;
    const std::string w = req.get_param_value("wait_ms");
    if (!w.empty() && w.size() <= 4 && w.find_first_not_of("0123456789") == std::string::npos) wait_ms = std::stoi(w);
    res.set_content(search.status_json(std::min(wait_ms, 2000)), "application/json");
  });
  server.Post("/api/search/cancel", json_post(deadline, [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(std::string("{\"cancelled\":") + (search.cancel() ? "true" : "false") + "}", "application/json");
  }));
  server.Get("/api/search/file", [&](const httplib::Request& req, httplib::Response& res) {
    const std::string name = req.get_param_value("name");
    std::string bytes = name == "search.json" || name == "search.csv" ? search.file(name) : std::string();
    if (bytes.empty()) return not_found(res, "name: search.json or search.csv of a finished search");
    attach(res, name, std::move(bytes));
  });
  server.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.body.empty()) res.set_content(error_json("HTTP " + std::to_string(res.status)), "application/json");
  });
  const int port = a.port == 0 ? server.bind_to_any_port("127.0.0.1") : (server.bind_to_port("127.0.0.1", a.port) ? a.port : -1);
  if (port < 0) throw common::UsageError("--port " + std::to_string(a.port) + ": cannot listen on 127.0.0.1 (in use?)");
  deadline.start(port);
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
              "message the CLI prints; /api/schema, /api/download?file=, /api/compare?real= and /api/search take "
              "the same body (docs/report.md lists the endpoints). Traces and logs under the roots can be compared.");
  return [sub, a]() {
    if (!sub->parsed()) return -1;
    serve(*a);
    return 0;
  };
}

}  // namespace simumax::tools
