#include "tools/serve_deadline.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>

namespace simumax::tools {

namespace {

// "address:port" of the peer of `fd` when it is a TCP connection accepted on 127.0.0.1:`port`; "" otherwise (a
// file, the listening socket, a socket of another port).
std::string peer_of(int fd, int port) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) return "";
  sockaddr_in local{}, peer{};
  socklen_t n = sizeof local;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &n) != 0 || local.sin_family != AF_INET ||
      ntohs(local.sin_port) != port) {
    return "";
  }
  n = sizeof peer;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &n) != 0 || peer.sin_family != AF_INET) return "";
  char addr[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &peer.sin_addr, addr, sizeof addr);
  return std::string(addr) + ":" + std::to_string(ntohs(peer.sin_port));
}

std::string key_of(const std::string& addr, int port) { return addr + ":" + std::to_string(port); }

}  // namespace

RequestDeadline::~RequestDeadline() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  if (watcher_.joinable()) watcher_.join();
}

void RequestDeadline::start(int port) {
  port_ = port;
  watcher_ = std::thread([this] { watch(); });
}

void RequestDeadline::request_read(const std::string& peer_addr, int peer_port) {
  std::lock_guard<std::mutex> lock(mutex_);
  Connection& c = connections_[key_of(peer_addr, peer_port)];
  c.reading = false;
}

void RequestDeadline::answered(const std::string& peer_addr, int peer_port) {
  std::lock_guard<std::mutex> lock(mutex_);
  Connection& c = connections_[key_of(peer_addr, peer_port)];
  c.reading = true;
  c.since = Clock::now();
}

void RequestDeadline::watch() {
  namespace fs = std::filesystem;
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_cv_.wait_for(lock, std::chrono::milliseconds(100), [this] { return stop_; })) {
    lock.unlock();
    std::map<std::string, int> open;  // peer -> fd, the server's connections now
    std::error_code ec;
    for (auto it = fs::directory_iterator("/proc/self/fd", ec); !ec && it != fs::directory_iterator();
         it.increment(ec)) {
      const int fd = std::atoi(it->path().filename().c_str());
      if (std::string peer = peer_of(fd, port_); !peer.empty()) open[peer] = fd;
    }
    lock.lock();
    const Clock::time_point now = Clock::now();
    for (auto it = connections_.begin(); it != connections_.end();) {
      it = open.count(it->first) ? std::next(it) : connections_.erase(it);  // closed: forgotten
    }
    for (const auto& [peer, fd] : open) {
      auto [it, fresh] = connections_.try_emplace(peer);
      if (fresh) it->second.since = now;
      // Checked again just before: the descriptor may have been closed and reused since the scan.
      if (it->second.reading && now - it->second.since > deadline_ && peer_of(fd, port_) == peer) {
        ::shutdown(fd, SHUT_RDWR);  // its blocked read returns: cpp-httplib closes the connection
      }
    }
  }
}

}  // namespace simumax::tools
