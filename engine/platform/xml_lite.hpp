// A small, strict XML reader for platform files: elements, attributes and line numbers, nothing more.
// It exists so that a bad user XML becomes a one-line error before SimGrid's parser (which aborts) sees it.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace simumax::platform::xml {

struct Element {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attributes;  // in file order, entities decoded
  int line = 0;                                                 // line of the '<' that opens it
  int parent = -1;                                              // index in Document::elements; -1: the root
  std::vector<int> children;

  // The value of attribute `key`, or nullptr.
  const std::string* find(std::string_view key) const;
};

struct Document {
  std::vector<Element> elements;  // in document order; elements[0] is the root
  std::string doctype;            // the text between "<!DOCTYPE" and ">", "" if there is none
};

// "<link id=\"x\">": the element as an error message names it (its id or name attribute, if any).
std::string describe(const Element& element);

// "line 12: <link id=\"x\">": the pointer part of a ConfigError about `element`.
std::string where(const Element& element);

// Parses `text`. Accepts an XML declaration and a DOCTYPE before the root, comments and whitespace.
// Throws common::ConfigError(path, "line N: <element>", message) on anything malformed: unterminated tags or
// comments, unquoted or duplicate attributes, mismatched or unclosed tags, unknown entities, text or CDATA,
// no or several root elements.
Document parse(std::string_view text, const std::string& path);

}  // namespace simumax::platform::xml
