#include "engine/platform/xml_lite.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>

#include "engine/common/error.hpp"

namespace simumax::platform::xml {

const std::string* Element::find(std::string_view key) const {
  for (const auto& [k, v] : attributes) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::string describe(const Element& element) {
  for (const char* key : {"id", "src", "name"}) {
    if (const std::string* v = element.find(key)) {
      return "<" + element.name + " " + key + "=\"" + *v + "\">";
    }
  }
  return "<" + element.name + ">";
}

std::string where(const Element& element) { return "line " + std::to_string(element.line) + ": " + describe(element); }

namespace {

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':'; }
bool is_name_char(char c) {
  return is_name_start(c) || std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '.';
}
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

class Parser {
 public:
  Parser(std::string_view text, const std::string& path) : text_(text), path_(path) {}

  Document run() {
    while (pos_ < text_.size()) {
      if (text_[pos_] == '<') {
        markup();
      } else {
        text_run();
      }
    }
    if (!stack_.empty()) {
      const Element& open = doc_.elements[stack_.back()];
      fail(open.line, describe(open), "is never closed (end of file reached)");
    }
    if (doc_.elements.empty()) fail(line_, "", "no root element");
    return std::move(doc_);
  }

 private:
  [[noreturn]] void fail(int line, const std::string& what, const std::string& message) const {
    throw common::ConfigError(path_, "line " + std::to_string(line) + (what.empty() ? "" : ": " + what), message);
  }

  bool starts_with(std::string_view s) const { return text_.substr(pos_, s.size()) == s; }

  void advance_to(size_t target) {
    for (; pos_ < target; ++pos_) {
      if (text_[pos_] == '\n') ++line_;
    }
  }

  void text_run() {
    const int start_line = line_;
    const size_t begin = pos_;
    const size_t end = text_.find('<', pos_);
    advance_to(end == std::string_view::npos ? text_.size() : end);
    for (size_t i = begin; i < pos_; ++i) {
      if (is_space(text_[i])) continue;
      // Where, never what: the file may be any file the user named (--platform /etc/passwd).
      const size_t line_start = text_.rfind('\n', i);
      const size_t column = i - (line_start == std::string_view::npos ? 0 : line_start + 1) + 1;
      const std::string what = stack_.empty() ? "" : describe(doc_.elements[stack_.back()]);
      fail(start_line + static_cast<int>(std::count(text_.begin() + begin, text_.begin() + i, '\n')), what,
           "unexpected text at column " + std::to_string(column) +
               " (platform files hold only elements: is this a SimGrid platform XML?)");
    }
  }

  void markup() {
    const int start_line = line_;
    if (starts_with("<!--")) return comment(start_line);
    if (starts_with("<!DOCTYPE") || starts_with("<?")) return prolog_item(start_line);
    if (starts_with("<!")) {
      fail(start_line, "",
           starts_with("<![CDATA[") ? "CDATA sections are not allowed in platform files"
                                    : "malformed comment or declaration (a comment is <!-- ... -->)");
    }
    if (starts_with("</")) return end_tag();
    start_tag();
  }

  // XML forbids "--" inside a comment, and SimGrid's parser rejects the file ("<!-- a -- b -->", "--->").
  void comment(int start_line) {
    const size_t dashes = text_.find("--", pos_ + 4);
    if (dashes == std::string_view::npos) fail(start_line, "<!--", "comment is never closed (no -->)");
    if (dashes + 2 >= text_.size() || text_[dashes + 2] != '>') {
      advance_to(dashes);
      fail(line_, "<!--", "\"--\" inside a comment (XML allows it only in the closing -->)");
    }
    advance_to(dashes + 3);
  }

  // <?xml ...?>, other processing instructions and <!DOCTYPE ...>: only before the root element, which is
  // where SimGrid's parser accepts them.
  void prolog_item(int start_line) {
    const bool doctype = starts_with("<!DOCTYPE");
    const std::string_view close = doctype ? ">" : "?>";
    const std::string what = doctype ? "<!DOCTYPE" : "<?";
    if (!doc_.elements.empty()) fail(start_line, what, "must come before the root element");
    const size_t end = text_.find(close, pos_);
    const size_t next_tag = text_.find('<', pos_ + 1);
    if (end == std::string_view::npos || next_tag < end)
      fail(start_line, what, "is not closed by " + std::string(close));
    if (doctype) doc_.doctype = std::string(text_.substr(pos_ + 9, end - pos_ - 9));
    if (!doctype && starts_with("<?xml") && !xml_declaration_ok(text_.substr(pos_ + 5, end - pos_ - 5))) {
      fail(start_line, "<?xml", "malformed XML declaration (write <?xml version='1.0'?>)");
    }
    advance_to(end + close.size());
  }

  // version="1.x" [encoding="..."] [standalone="..."], as SimGrid's parser wants them.
  static bool xml_declaration_ok(std::string_view body) {
    size_t i = 0;
    bool first = true;
    for (;;) {
      const size_t before = i;
      while (i < body.size() && is_space(body[i])) ++i;
      if (i == body.size()) return !first;
      if (i == before) return false;
      const size_t name_end = body.find('=', i);
      if (name_end == std::string_view::npos) return false;
      const std::string_view name = body.substr(i, name_end - i);
      if (first ? name != "version" : (name != "encoding" && name != "standalone")) return false;
      i = name_end + 1;
      if (i >= body.size() || (body[i] != '"' && body[i] != '\'')) return false;
      const size_t value_end = body.find(body[i], i + 1);
      if (value_end == std::string_view::npos) return false;
      const std::string_view value = body.substr(i + 1, value_end - i - 1);
      if (first && (value.size() < 3 || value.substr(0, 2) != "1." ||
                    value.find_first_not_of("0123456789", 2) != std::string_view::npos)) {
        return false;
      }
      i = value_end + 1;
      first = false;
    }
  }

  std::string name_at(const char* context) {
    if (pos_ >= text_.size() || !is_name_start(text_[pos_])) {
      fail(line_, "", std::string("expected a name ") + context);
    }
    const size_t begin = pos_;
    while (pos_ < text_.size() && is_name_char(text_[pos_])) ++pos_;
    return std::string(text_.substr(begin, pos_ - begin));
  }

  void skip_spaces() {
    while (pos_ < text_.size() && is_space(text_[pos_])) advance_to(pos_ + 1);
  }

  void end_tag() {
    const int start_line = line_;
    pos_ += 2;
    const std::string name = name_at("after '</'");
    skip_spaces();
    if (pos_ >= text_.size() || text_[pos_] != '>') fail(start_line, "</" + name + ">", "end tag is not closed by '>'");
    ++pos_;
    if (stack_.empty()) fail(start_line, "</" + name + ">", "end tag without a matching start tag");
    const Element& open = doc_.elements[stack_.back()];
    if (open.name != name) {
      fail(start_line, "</" + name + ">",
           "does not match " + describe(open) + " opened at line " + std::to_string(open.line));
    }
    stack_.pop_back();
  }

  void start_tag() {
    Element element;
    element.line = line_;
    ++pos_;
    element.name = name_at("after '<'");
    const std::string tag = "<" + element.name + ">";
    for (;;) {
      const bool had_space = pos_ < text_.size() && is_space(text_[pos_]);
      skip_spaces();
      if (pos_ >= text_.size() || text_[pos_] == '<') fail(element.line, tag, "tag is not closed by '>' or '/>'");
      if (text_[pos_] == '>' || starts_with("/>")) break;
      if (!had_space) fail(line_, tag, "attributes must be separated by spaces");
      attribute(element, tag);
    }
    const bool self_closing = text_[pos_] == '/';
    pos_ += self_closing ? 2 : 1;
    add(std::move(element), self_closing);
  }

  void attribute(Element& element, const std::string& tag) {
    if (!is_name_start(text_[pos_])) {
      fail(line_, tag, std::string("unexpected character '") + text_[pos_] + "' in tag");
    }
    std::string key = name_at("for an attribute");
    skip_spaces();
    if (pos_ >= text_.size() || text_[pos_] != '=') fail(line_, tag, "attribute " + key + " has no '=value'");
    ++pos_;
    skip_spaces();
    if (pos_ >= text_.size() || (text_[pos_] != '"' && text_[pos_] != '\'')) {
      fail(line_, tag, "the value of attribute " + key + " must be quoted");
    }
    const char quote = text_[pos_++];
    const int value_line = line_;
    const size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) fail(value_line, tag, "the value of attribute " + key + " is never closed");
    std::string_view raw = text_.substr(pos_, end - pos_);
    if (raw.find('<') != std::string_view::npos) fail(value_line, tag, "'<' inside the value of attribute " + key);
    advance_to(end + 1);
    if (element.find(key) != nullptr) fail(value_line, tag, "attribute " + key + " is given twice");
    element.attributes.emplace_back(std::move(key), decode(raw, value_line, tag));
  }

  std::string decode(std::string_view raw, int line, const std::string& tag) const {
    std::string out;
    out.reserve(raw.size());
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] != '&') {
        out += raw[i];
        continue;
      }
      const size_t semi = raw.find(';', i);
      if (semi == std::string_view::npos) fail(line, tag, "'&' without ';' in an attribute value (write &amp;)");
      const std::string_view entity = raw.substr(i + 1, semi - i - 1);
      out += entity_text(entity, line, tag);
      i = semi;
    }
    return out;
  }

  std::string entity_text(std::string_view entity, int line, const std::string& tag) const {
    if (entity == "amp") return "&";
    if (entity == "lt") return "<";
    if (entity == "gt") return ">";
    if (entity == "quot") return "\"";
    if (entity == "apos") return "'";
    if (entity.size() > 1 && entity[0] == '#') {
      const bool hex = entity[1] == 'x' || entity[1] == 'X';
      const std::string digits(entity.substr(hex ? 2 : 1));
      char* end = nullptr;
      const unsigned long code = std::strtoul(digits.c_str(), &end, hex ? 16 : 10);
      if (!digits.empty() && *end == '\0' && code > 0 && code < 128) return std::string(1, static_cast<char>(code));
    }
    fail(line, tag, "unknown or unsupported entity &" + std::string(entity) + ";");
  }

  // SimGrid 3.32's own parser crashes (SIGSEGV) on elements nested a few hundred deep; a platform needs a handful.
  static constexpr size_t kMaxDepth = 64;

  void add(Element element, bool self_closing) {
    const int index = static_cast<int>(doc_.elements.size());
    if (stack_.size() >= kMaxDepth) {
      fail(element.line, describe(element),
           "nested deeper than " + std::to_string(kMaxDepth) + " elements (SimGrid's parser fails on deep nesting)");
    }
    if (stack_.empty()) {
      if (!doc_.elements.empty()) {
        fail(element.line, describe(element),
             "a second root element (the file already has " + describe(doc_.elements[0]) + ")");
      }
    } else {
      element.parent = stack_.back();
      doc_.elements[element.parent].children.push_back(index);
    }
    doc_.elements.push_back(std::move(element));
    if (!self_closing) stack_.push_back(index);
  }

  std::string_view text_;
  const std::string& path_;
  size_t pos_ = 0;
  int line_ = 1;
  Document doc_;
  std::vector<int> stack_;
};

}  // namespace

Document parse(std::string_view text, const std::string& path) { return Parser(text, path).run(); }

}  // namespace simumax::platform::xml
