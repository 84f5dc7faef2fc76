// The kernel classification table (data/kernel_classes.json): ordered rules that map a GPU kernel's name (or one
// of our task names) to a class (gemm, attention, comm, ...) and a subclass (all_reduce, norm, ...). It is data so
// users can extend it without touching code; docs/compare.md describes the format.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace re2 {
class RE2;
}

namespace simumax::compare {

// How compare adds a class up: compute hides communication, comm is what can be exposed, memory is copies.
enum class ClassKind : uint8_t { kCompute, kComm, kMemory };
const char* to_string(ClassKind kind);

struct KernelClass {
  std::string name;
  ClassKind kind = ClassKind::kCompute;
};

// Indices into KernelClassTable::classes() and subclasses().
struct Classification {
  uint16_t cls = 0;
  uint16_t sub = 0;
};

class KernelClassTable {
 public:
  // Reads and checks a table file. Throws ConfigError(path, json-pointer, message) for unreadable or invalid JSON,
  // a missing or mistyped field, an unknown key (keys starting with '_' are comments), a rule naming an undeclared
  // class, a rule without any condition, or a regex RE2 rejects.
  static KernelClassTable load(const std::string& path);
  // The same from text; `label` names it in errors.
  static KernelClassTable parse(const std::string& text, const std::string& label);

  // The first rule that matches, else the default class (subclass: the class's own name). `cat` is the event
  // category ("kernel", "gpu_memcpy", ...; empty for our own tasks).
  Classification classify(std::string_view cat, std::string_view name) const;

  const std::vector<KernelClass>& classes() const { return classes_; }
  const std::vector<std::string>& subclasses() const { return subclasses_; }
  const KernelClass& class_of(Classification c) const { return classes_[c.cls]; }
  const std::string& subclass_name(Classification c) const { return subclasses_[c.sub]; }
  // Index of a class by name, -1 if none.
  int class_index(const std::string& name) const;
  // Where an event goes when its lane in our trace says what it is but the rule its name matches is of another
  // kind: the default class if it has that kind, else the first class of that kind with subclass "other" (the
  // default class when no class has that kind).
  Classification fallback(ClassKind kind) const;
  const std::string& source() const { return source_; }
  // The id of subclass `name`, declared now when the rules never named it (compare types NCCL kernels by the
  // collective their CPU op called, which a user table may not list).
  uint16_t add_subclass(const std::string& name) { return subclass_id(name); }

 private:
  struct Rule {
    uint16_t cls = 0;
    uint16_t sub = 0;
    std::string cat;                    // empty: any category
    std::vector<std::string> contains;  // lower case; empty: no substring condition
    bool has_regex = false;
    std::shared_ptr<const re2::RE2> regex;  // RE2: linear time, whatever the pattern or the name's length
  };
  uint16_t subclass_id(const std::string& name);

  std::string source_;
  std::vector<KernelClass> classes_;
  std::vector<std::string> subclasses_;
  std::vector<Rule> rules_;
  uint16_t default_class_ = 0;
  friend struct TableParser;
};

}  // namespace simumax::compare
