// The pickle writer's output read back by python3's own pickle module (no torch needed).
#include "engine/report/pickle_writer.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>

namespace simumax::report {
namespace {

bool have_python() { return std::system("python3 -c 'import pickle' >/dev/null 2>&1") == 0; }

// Runs python3 on `script` with the pickle file as argv[1]; returns what it printed (stdout and stderr).
std::string run_python(const std::string& script, const std::string& pickle_path) {
  const std::string script_path = pickle_path + ".py";
  std::ofstream(script_path) << script;
  const std::string cmd = "python3 " + script_path + " " + pickle_path + " 2>&1";
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    pclose(p);
  }
  std::remove(script_path.c_str());
  return out;
}

// (snprintf, not "s" + std::to_string(i): GCC 12 warns falsely about that with -Werror=restrict)
std::string name(const char* prefix, int i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s%d", prefix, i);
  return buf;
}

std::string sample_pickle() {
  PickleWriter w;
  w.begin_dict();
  w.str("ints");
  w.begin_list();
  for (int64_t v : {int64_t{0}, int64_t{255}, int64_t{256}, int64_t{65535}, int64_t{65536}, int64_t{-1},
                    int64_t{INT32_MIN}, int64_t{INT32_MAX}, int64_t{INT32_MAX} + 1, int64_t{1} << 40,
                    -(int64_t{1} << 40), std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()}) {
    w.integer(v);
  }
  w.end_list();
  w.str("floats");
  w.begin_list();
  w.real(0.5);
  w.real(-1e300);
  w.real(1.0 / 3.0);
  w.end_list();
  w.str("flags");
  w.begin_list();
  w.boolean(true);
  w.boolean(false);
  w.none();
  w.end_list();
  w.str("pool");
  w.begin_tuple();
  w.integer(0);
  w.integer(0);
  w.end_tuple();
  w.str("long");  // over CPython's batch of 1000: several APPENDS
  w.begin_list();
  for (int i = 0; i < 2500; ++i) w.integer(i);
  w.end_list();
  w.str("strings");  // over 256 memo entries: LONG_BINPUT / LONG_BINGET
  w.begin_list();
  for (int rep = 0; rep < 2; ++rep) {
    for (int i = 0; i < 300; ++i) w.str(name("s", i));
  }
  w.end_list();
  w.str("unicode");
  w.str("\xc2\xb5s");  // "µs" in UTF-8
  w.str("empty_list");
  w.begin_list();
  w.end_list();
  w.str("empty_dict");
  w.begin_dict();
  w.end_dict();
  w.str("big_dict");
  w.begin_dict();
  for (int i = 0; i < 1500; ++i) {
    w.str(name("k", i));
    w.integer(i);
  }
  w.end_dict();
  w.end_dict();
  return w.finish();
}

TEST(PickleWriter, Python3ReadsEveryTypeBack) {
  if (!have_python()) GTEST_SKIP() << "python3 not found";
  const std::string path = ::testing::TempDir() + "/pickle_writer_test.pickle";
  std::ofstream(path, std::ios::binary) << sample_pickle();
  const std::string script = R"(import pickle, pickletools, sys
data = open(sys.argv[1], 'rb').read()
d = pickle.loads(data)
assert d['ints'] == [0, 255, 256, 65535, 65536, -1, -2**31, 2**31 - 1, 2**31, 2**40, -2**40, 2**63 - 1, -2**63], d['ints']
assert d['floats'] == [0.5, -1e300, 1 / 3], d['floats']
assert d['flags'] == [True, False, None]
assert d['pool'] == (0, 0) and isinstance(d['pool'], tuple)
assert d['long'] == list(range(2500))
assert d['strings'] == ['s%d' % i for i in range(300)] * 2
assert d['unicode'] == '\u00b5s'
assert d['empty_list'] == [] and d['empty_dict'] == {}
assert d['big_dict'] == {'k%d' % i: i for i in range(1500)}
# Only opcodes that the memory_viz page's JavaScript unpickler implements.
js = {'PROTO', 'EMPTY_DICT', 'EMPTY_LIST', 'MARK', 'SETITEMS', 'APPENDS', 'BININT', 'BININT1', 'BININT2',
      'LONG1', 'BINFLOAT', 'NEWTRUE', 'NEWFALSE', 'NONE', 'BINUNICODE', 'BINPUT', 'LONG_BINPUT', 'BINGET',
      'LONG_BINGET', 'TUPLE', 'STOP'}
used = {op.name for op, _, _ in pickletools.genops(data)}
assert used <= js, used - js
print('ok')
)";
  EXPECT_EQ(run_python(script, path), "ok\n");
  std::remove(path.c_str());
}

TEST(PickleWriter, StartsWithProtocolTwoAndEndsWithStop) {
  PickleWriter w;
  w.none();
  const std::string bytes = w.finish();
  EXPECT_EQ(bytes, std::string("\x80\x02N.", 4));
}

TEST(PickleWriter, UnbalancedContainersAreOurBug) {
  PickleWriter w;
  w.begin_list();
  EXPECT_THROW(w.end_dict(), std::logic_error);
  EXPECT_THROW(w.finish(), std::logic_error);
}

}  // namespace
}  // namespace simumax::report
