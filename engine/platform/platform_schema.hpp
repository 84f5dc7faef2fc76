// The part of SimGrid's v4.1 platform DTD that simumax-sim supports: which elements may appear where, with
// which attributes, and the DOCTYPE that SimGrid's parser insists on. Used by check_platform_xml.
#pragma once

#include <string>

#include "engine/platform/xml_lite.hpp"

namespace simumax::platform {

// Throws common::ConfigError(path, "line N: <element ...>", message) if element `index` of `doc` is not a
// supported element, sits in a place the DTD forbids, has an unknown attribute (with a suggestion) or lacks
// a required one.
void check_schema(const xml::Document& doc, int index, const std::string& path);

// Throws common::ConfigError unless `doc` has <!DOCTYPE platform SYSTEM "<a DTD address SimGrid knows>">.
// REQUIRES: doc has a root element.
void check_doctype(const xml::Document& doc, const std::string& path);

}  // namespace simumax::platform
