// A minimal Python pickle (protocol 2) writer for dict / list / tuple / str / int / float / bool / None, enough
// for PyTorch's memory snapshot format. Python's pickle module and the memory_viz web page (its own JavaScript
// unpickler) both read what it writes; the opcodes used are listed in docs/memory-artifacts.md.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace simumax::report {

// Values are written in order, containers opened and closed around their items, as a streaming encoder:
//   PickleWriter w; w.begin_dict(); w.str("a"); w.integer(1); w.end_dict(); std::string bytes = w.finish();
// A dict takes key, value, key, value...
class PickleWriter {
 public:
  PickleWriter();

  void none();
  void boolean(bool v);
  void integer(int64_t v);
  void real(double v);
  // A string. Repeated strings (dict keys, enum-like values) are written once and referenced after (the
  // memo), which keeps thousands of entries with the same keys small; pass memo = false for a string seen
  // once, which keeps the memo table small.
  void str(std::string_view s, bool memo = true);
  void begin_dict();
  void end_dict();
  void begin_list();
  void end_list();
  // Closes a list and remembers it: recall(id) writes the same list object again (one copy in the file and
  // after unpickling, like a shared Python object).
  uint32_t end_list_remembered();
  void recall(uint32_t id);
  void begin_tuple();
  void end_tuple();

  // REQUIRES: every container closed. Returns the pickle bytes (ending with STOP).
  std::string finish();

 private:
  enum class Kind : uint8_t { kDict, kList, kTuple };
  struct Open {
    Kind kind;
    uint32_t items = 0;  // values since the last MARK (dict: keys and values)
  };
  void item_done();
  uint32_t memo_put();  // remembers the value on top of the unpickler's stack

  std::string out_;
  std::vector<Open> open_;
  std::deque<std::string> memo_text_;                     // owns the memoised strings
  std::unordered_map<std::string_view, uint32_t> memo_;  // views into memo_text_
  uint32_t next_memo_ = 0;
};

}  // namespace simumax::report
