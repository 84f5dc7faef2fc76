// `simumax-sim serve` under attack (issue 32): another site's page (DNS rebinding, cross-origin POSTs), a JSON
// body nested 200,000 deep, clients that trickle their request, a request too large to run, searches the CLI
// refuses, a symbolic-link root, and SIGINT during a run.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/serve_client.hpp"

namespace simumax::tests::serve {
namespace {

using Clock = std::chrono::steady_clock;

std::string request(const std::string& head, const std::string& body = "") {
  return head + "Connection: close\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

TEST(ServeHardening, AnswersOnlyItsOwnHostAndOrigin) {
  Server s;
  ASSERT_GT(s.port(), 0);
  const std::string port = std::to_string(s.port());
  const std::vector<std::string> ours = {"127.0.0.1", "127.0.0.1:" + port, "localhost:" + port, "[::1]:" + port};
  for (const std::string& host : ours) {
    EXPECT_EQ(status_of(send_raw(s.port(), request("GET /api/files HTTP/1.1\r\nHost: " + host + "\r\n"), false)), 200)
        << host;
  }
  // A page of evil.example that made its name resolve to 127.0.0.1 sends its own name.
  const std::vector<std::string> others = {"evil.example:" + port, "evil.example", "127.0.0.1.evil.example",
                                           "localhost:x", ""};
  for (const std::string& host : others) {
    const std::string r = send_raw(s.port(), request("GET /api/files HTTP/1.1\r\nHost: " + host + "\r\n"), false);
    EXPECT_EQ(status_of(r), 403) << host;
    EXPECT_EQ(r.find("models/"), std::string::npos) << host;
  }
  // A cross-origin POST of a form or a no-cors fetch: text/plain is refused as on every other POST, and an
  // Origin other than this server's is refused even with the right content type.
  const std::string cancel = "POST /api/search/cancel HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  EXPECT_EQ(status_of(send_raw(s.port(), request(cancel + "Content-Type: text/plain\r\n", "{}"), false)), 415);
  EXPECT_EQ(status_of(send_raw(s.port(),
                               request(cancel + "Content-Type: application/json\r\nOrigin: http://evil.example\r\n", "{}"),
                               false)),
            403);
  EXPECT_EQ(status_of(send_raw(s.port(),
                               request(cancel + "Content-Type: application/json\r\nOrigin: http://127.0.0.1:" + port +
                                           "\r\n",
                                       "{}"),
                               false)),
            200);
}

TEST(ServeHardening, DeeplyNestedBodyIsRefusedNotACrash) {
  Server s;
  ASSERT_GT(s.port(), 0);
  const std::string deep = "{\"model\": " + std::string(200000, '[') + std::string(200000, ']') + "}";
  for (const char* path : {"/api/run", "/api/schema", "/api/search?world_size=8&global_batch_size=32"}) {
    const std::string r = post(s.port(), path, deep);
    EXPECT_EQ(status_of(r), 400) << path;
    EXPECT_NE(r.find("request: nested deeper than 100 levels (line 1, column 110)"), std::string::npos) << r;
  }
  EXPECT_TRUE(s.alive());
}

TEST(ServeHardening, ClientsTricklingTheirRequestNeitherBlockItNorStay) {
  Server s;
  ASSERT_GT(s.port(), 0);
  // Twelve sockets that send a header byte a second: each read is within the per-read timeout.
  std::vector<int> slow;
  for (int i = 0; i < 12; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(s.port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    send(fd, "GET / HTTP/1.1\r\n", 16, MSG_NOSIGNAL);
    slow.push_back(fd);
  }
  const Clock::time_point t0 = Clock::now();
  std::vector<double> closed_after(slow.size(), -1);
  bool answered = false;
  for (int second = 0; second < 16; ++second) {
    for (size_t i = 0; i < slow.size(); ++i) {
      if (closed_after[i] >= 0) continue;
      char c = 0;
      // The server shut the socket: the peek reads its end (0), or the send fails.
      if (recv(slow[i], &c, 1, MSG_DONTWAIT | MSG_PEEK) == 0 || send(slow[i], "X", 1, MSG_NOSIGNAL) < 0) {
        closed_after[i] = std::chrono::duration<double>(Clock::now() - t0).count();
      }
    }
    if (!answered) {
      const Clock::time_point a = Clock::now();
      EXPECT_EQ(status_of(get(s.port(), "/api/files")), 200);
      EXPECT_LT(std::chrono::duration<double>(Clock::now() - a).count(), 2.0) << "second " << second;
      answered = true;
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  for (size_t i = 0; i < slow.size(); ++i) {
    // The whole request within 10 s of its first byte, checked every 0.1 s: closed between 10 and 12 s (this
    // loop notices within a second more).
    EXPECT_GE(closed_after[i], 9.0) << "socket " << i;
    EXPECT_LE(closed_after[i], 13.5) << "socket " << i;
    close(slow[i]);
  }
}

TEST(ServeHardening, RefusesUpFrontWhatItCannotRun) {
  Server s;
  ASSERT_GT(s.port(), 0);
  const std::string body = default_request(1).dump();
  // The CLI's limits, answered 400 by the request itself (they were 202, then the search failed or ran on).
  const std::string huge = post(s.port(), "/api/search?world_size=1099511627776&global_batch_size=32", body);
  EXPECT_EQ(status_of(huge), 400);
  EXPECT_NE(huge.find("--world-size: expected 1 to 16777216 (2^24) GPUs, got 1099511627776"), std::string::npos) << huge;
  const std::string margin = post(s.port(), "/api/search?world_size=8&global_batch_size=32&memory_margin_gib=-5", body);
  EXPECT_EQ(status_of(margin), 400);
  EXPECT_NE(margin.find("--memory-margin-gib must not be negative, got -5"), std::string::npos) << margin;
  // A step over serve's own task limit (5e6) is refused before it is built; the CLI runs it.
  Json big = default_request(1);
  big["model"]["layer_num"] = 80;
  big["strategy"]["micro_batch_num"] = 30000;
  const std::string r = post(s.port(), "/api/run", big.dump());
  EXPECT_EQ(status_of(r), 400);
  EXPECT_NE(r.find("over --max-tasks 5e+06"), std::string::npos) << r.substr(0, 600);
  EXPECT_NE(r.find("serve's limit"), std::string::npos) << r.substr(0, 600);
}

TEST(ServeHardening, ASymbolicLinkRootIsListedUnderItsOwnName) {
  const fs::path dir = scratch("link-root");
  fs::create_directories(dir / "target");
  std::ofstream(dir / "target" / "m.json") << "{}";
  fs::create_directory_symlink(dir / "target", dir / "models");
  Server s({"--root", (dir / "models").string()});
  ASSERT_GT(s.port(), 0);
  const std::string files = get(s.port(), "/api/files");
  EXPECT_NE(files.find("\"models/m.json\""), std::string::npos) << files;
  EXPECT_EQ(files.find("target/"), std::string::npos) << files;
  EXPECT_EQ(status_of(get(s.port(), "/api/file?path=models/m.json")), 200);
}

TEST(ServeHardening, InterruptedDuringARunLeavesNoScratchFolder) {
  const fs::path tmp = scratch("tmpdir");
  fs::create_directories(tmp);
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old ? old : "";
  setenv("TMPDIR", tmp.c_str(), 1);
  Server s;
  if (old) setenv("TMPDIR", saved.c_str(), 1);
  else unsetenv("TMPDIR");
  ASSERT_GT(s.port(), 0);
  // A run of a few seconds (its trace and memory files are large), interrupted while it writes them.
  Json slow = default_request(1);
  slow["strategy"]["micro_batch_num"] = 12000;
  std::thread client([&] { post(s.port(), "/api/run", slow.dump()); });
  // The request's folders ("simumax-serve-XXXXXX"), not this test's own ("simumax-serve-test-...").
  const auto scratch_folders = [&tmp] {
    std::vector<std::string> found;
    for (const auto& e : fs::directory_iterator(tmp)) {
      const std::string name = e.path().filename().string();
      if (name.rfind("simumax-serve-", 0) == 0 && name.rfind("simumax-serve-test", 0) != 0) found.push_back(name);
    }
    return found;
  };
  for (int i = 0; i < 200 && scratch_folders().empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_FALSE(scratch_folders().empty()) << "no scratch folder appeared under " << tmp;
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_FALSE(scratch_folders().empty()) << "the run ended before the signal: make it longer";
  const int status = s.stop_with(SIGINT);
  client.join();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 130) << status;
  EXPECT_TRUE(scratch_folders().empty()) << scratch_folders().front();
}

}  // namespace
}  // namespace simumax::tests::serve
