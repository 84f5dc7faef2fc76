// A whole-request deadline for `simumax-sim serve`: a client that trickles its request (slowloris: a header byte
// every few seconds, each read within cpp-httplib's per-read timeout) holds a worker thread for as long as it
// likes, and a dozen such sockets made the server unresponsive (issue 32). cpp-httplib 0.11 (Debian 12) has no
// deadline of its own and hands no socket to the application, so a watcher thread finds the server's connected
// sockets in /proc/self/fd and shuts those whose request is not in after `deadline` seconds.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace simumax::tools {

class RequestDeadline {
 public:
  using Clock = std::chrono::steady_clock;
  explicit RequestDeadline(std::chrono::milliseconds deadline) : deadline_(deadline) {}
  ~RequestDeadline();
  RequestDeadline(const RequestDeadline&) = delete;
  RequestDeadline& operator=(const RequestDeadline&) = delete;

  // Watches the connections accepted on 127.0.0.1:`port` from now on.
  void start(int port);
  // The request of the connection from `peer` (remote address and port) is in: its handler may take its time.
  void request_read(const std::string& peer_addr, int peer_port);
  // Its answer is written: the next request of the connection (keep-alive) has `deadline` from now.
  void answered(const std::string& peer_addr, int peer_port);

 private:
  struct Connection {
    Clock::time_point since;  // when its current request began (first seen, or its last answer)
    bool reading = true;      // false while its handler runs
  };
  void watch();

  std::chrono::milliseconds deadline_;
  int port_ = 0;
  std::mutex mutex_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  std::map<std::string, Connection> connections_;  // "address:port" of the peer
  std::thread watcher_;
};

}  // namespace simumax::tools
