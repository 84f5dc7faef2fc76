#include "tools/serve_paths.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string>

#include "engine/common/error.hpp"
#include "engine/report/trace_file.hpp"

namespace simumax::tools {

namespace fs = std::filesystem;

namespace {
constexpr uintmax_t kMaxFileBytes = 1u << 20;
constexpr size_t kMaxFiles = 10000;

bool under(const fs::path& p, const fs::path& root) {
  const auto [r, q] = std::mismatch(root.begin(), root.end(), p.begin(), p.end());
  return r == root.end();
}
}  // namespace

ServeRoots make_serve_roots(const std::vector<std::string>& folders) {
  ServeRoots roots;
  for (const std::string& f : folders) {
    std::error_code ec;
    if (!fs::is_directory(f, ec)) throw common::UsageError("--root " + f + ": not a folder");
    const fs::path canon = fs::canonical(f, ec);
    if (ec) throw common::UsageError("--root " + f + ": " + ec.message());
    // The folder's name as given ("models"), not its target's when it is a symbolic link: the app lists
    // "models/llama3-8b.json" for --root models whatever models points at.
    fs::path given = fs::path(f).lexically_normal();
    if (given.filename().empty()) given = given.parent_path();
    std::string name = given.filename().string();
    if (name.empty() || name == "." || name == "..") name = canon.filename().string();
    for (const auto& [n, p] : roots.named) {
      if (n == name) throw common::UsageError("--root " + f + ": a second folder named '" + name + "'");
    }
    roots.named.emplace_back(name, canon.string());
  }
  return roots;
}

namespace {

struct FileRule {
  bool real_runs = false;  // *.json, *.json.gz, *.log, *.txt of any size; else *.json of at most kMaxFileBytes
};

bool allowed_name(const fs::path& rel, FileRule rule) {
  const std::string name = rel.filename().string();
  const auto ends = [&name](const char* tail) {
    const size_t n = std::char_traits<char>::length(tail);
    return name.size() > n && name.compare(name.size() - n, n, tail) == 0;
  };
  if (!rule.real_runs) return ends(".json");
  return ends(".json") || ends(".json.gz") || ends(".log") || ends(".txt");
}

std::optional<std::string> resolve(const ServeRoots& roots, const std::string& requested, FileRule rule) {
  if (requested.empty() || requested.size() > 512 || requested.front() == '/') return std::nullopt;
  for (char c : requested) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' || c == '/')) return std::nullopt;
  }
  const fs::path rel(requested);
  for (const fs::path& part : rel) {
    if (part == ".." || part == ".") return std::nullopt;
  }
  if (!allowed_name(rel, rule)) return std::nullopt;
  const std::string name = rel.begin()->string();
  for (const auto& [n, root] : roots.named) {
    if (n != name) continue;
    std::error_code ec;
    const fs::path canon = fs::canonical(fs::path(root) / rel.lexically_relative(name), ec);
    if (ec || !under(canon, root) || !fs::is_regular_file(canon, ec)) return std::nullopt;
    if (!rule.real_runs && (fs::file_size(canon, ec) > kMaxFileBytes || ec)) return std::nullopt;
    return canon.string();
  }
  return std::nullopt;
}

constexpr uint64_t kSniffBytes = 4u << 20;  // a Kineto trace's "traceEvents" follows a few kB of device properties

// Reads a JSON document's top level only, at most kSniffBytes of it: enough to tell a Chrome trace from a config.
class TopLevelScan {
 public:
  explicit TopLevelScan(const std::string& path) : buf_(path), in_(&buf_) {}
  int get() { return read_++ < kSniffBytes ? in_.get() : EOF; }
  int next() {
    int c = get();
    while (c == ' ' || c == '\n' || c == '\r' || c == '\t') c = get();
    return c;
  }
  // After an opening quote: the string's text, escapes kept as written (a key we look for has none).
  std::string string() {
    std::string out;
    for (int c = get(); c != '"'; c = get()) {
      if (c == EOF) return out;
      out += static_cast<char>(c);
      if (c == '\\') out += static_cast<char>(get());
    }
    return out;
  }
  // Skips one value; returns the character after it (',' or the closing '}'), or EOF.
  int skip_value() {
    int depth = 0;
    for (int c = next(); c != EOF; c = get()) {
      if (c == '"') string();
      else if (c == '{' || c == '[') ++depth;
      else if (c == '}' || c == ']') { if (depth-- == 0) return c; }
      else if (c == ',' && depth == 0) return c;
    }
    return EOF;
  }

 private:
  report::TraceStreamBuf buf_;
  std::istream in_;
  uint64_t read_ = 0;
};

// A Chrome trace as compare reads one (Trace Event Format): a top-level array of event objects, or an object with
// a top-level "traceEvents" key. A model, platform, strategy or scenario file is an object without that key. Only
// the syntax of the top level is looked at: a broken trace is listed, and compare says what is wrong with it.
bool looks_like_trace(const std::string& path) {
  try {
    TopLevelScan scan(path);
    const int first = scan.next();
    if (first == '[') return scan.next() == '{';
    if (first != '{') return false;
    for (int c = scan.next(); c == '"'; c = scan.next()) {
      if (scan.string() == "traceEvents") return true;
      if (scan.next() != ':' || scan.skip_value() != ',') return false;
    }
    return false;
  } catch (const std::exception&) {
    return false;  // unreadable or corrupt gzip: compare, if asked, says so
  }
}

bool is_log_name(const std::string& name) {
  const auto ends = [&name](const std::string& tail) {
    return name.size() > tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
  };
  return ends(".log") || ends(".txt");
}

std::vector<std::string> list(const ServeRoots& roots, FileRule rule) {
  std::vector<std::string> out;
  for (const auto& [name, root] : roots.named) {
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      if (out.size() >= kMaxFiles) break;
      if (!it->is_regular_file(ec) || !allowed_name(it->path(), rule)) continue;
      const std::string rel = name + "/" + fs::relative(it->path(), root, ec).generic_string();
      if (!ec && resolve(roots, rel, rule)) out.push_back(rel);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::vector<std::string> list_serve_files(const ServeRoots& roots) { return list(roots, {}); }

std::optional<std::string> resolve_serve_file(const ServeRoots& roots, const std::string& requested) {
  return resolve(roots, requested, {});
}

std::vector<std::string> list_real_runs(const ServeRoots& roots) {
  std::vector<std::string> out;
  for (std::string& rel : list(roots, {true})) {
    if (is_log_name(rel) || looks_like_trace(*resolve(roots, rel, {true}))) out.push_back(std::move(rel));
  }
  return out;
}

std::optional<std::string> resolve_real_run(const ServeRoots& roots, const std::string& requested) {
  return resolve(roots, requested, {true});
}

}  // namespace simumax::tools
