#include "engine/report/pickle_writer.hpp"

#include <cstring>

#include "engine/common/error.hpp"

namespace simumax::report {

namespace {

// Opcodes of pickle protocols 0-2 (CPython's Lib/pickle.py names).
constexpr char kProto = '\x80', kStop = '.', kNone = 'N', kNewTrue = '\x88', kNewFalse = '\x89';
constexpr char kBinInt = 'J', kBinInt1 = 'K', kBinInt2 = 'M', kLong1 = '\x8a', kBinFloat = 'G';
constexpr char kBinUnicode = 'X', kEmptyDict = '}', kEmptyList = ']', kMark = '(', kSetItems = 'u';
constexpr char kAppends = 'e', kTuple = 't', kBinPut = 'q', kLongBinPut = 'r', kBinGet = 'h', kLongBinGet = 'j';

// CPython's pickler flushes SETITEMS / APPENDS every 1000 items; so do we, because the memo_viz page
// unpickles a batch with one JavaScript spread call, which fails on very long argument lists.
constexpr uint32_t kBatch = 1000;

void put_le(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

}  // namespace

PickleWriter::PickleWriter() {
  out_ += kProto;
  out_ += '\x02';
}

void PickleWriter::item_done() {
  if (open_.empty() || open_.back().kind == Kind::kTuple) return;
  Open& o = open_.back();
  ++o.items;
  const uint32_t limit = o.kind == Kind::kDict ? 2 * kBatch : kBatch;
  if (o.items == limit) {
    out_ += o.kind == Kind::kDict ? kSetItems : kAppends;
    out_ += kMark;
    o.items = 0;
  }
}

void PickleWriter::none() {
  out_ += kNone;
  item_done();
}

void PickleWriter::boolean(bool v) {
  out_ += v ? kNewTrue : kNewFalse;
  item_done();
}

void PickleWriter::integer(int64_t v) {
  if (v >= 0 && v < 0x100) {
    out_ += kBinInt1;
    put_le(out_, static_cast<uint64_t>(v), 1);
  } else if (v >= 0 && v < 0x10000) {
    out_ += kBinInt2;
    put_le(out_, static_cast<uint64_t>(v), 2);
  } else if (v >= INT32_MIN && v <= INT32_MAX) {
    out_ += kBinInt;
    put_le(out_, static_cast<uint64_t>(static_cast<uint32_t>(static_cast<int32_t>(v))), 4);
  } else {
    // LONG1: the shortest little-endian two's complement whose top bit carries the sign.
    const auto u = static_cast<uint64_t>(v);
    int n = 8;
    while (n > 1) {
      const auto top = static_cast<uint8_t>(u >> (8 * (n - 1)));
      const auto next_sign = static_cast<uint8_t>((u >> (8 * (n - 2))) & 0x80);
      if ((v >= 0 && top == 0 && next_sign == 0) || (v < 0 && top == 0xff && next_sign != 0)) {
        --n;
      } else {
        break;
      }
    }
    out_ += kLong1;
    out_ += static_cast<char>(n);
    put_le(out_, u, n);
  }
  item_done();
}

void PickleWriter::real(double v) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  out_ += kBinFloat;
  for (int i = 7; i >= 0; --i) out_ += static_cast<char>((bits >> (8 * i)) & 0xff);  // big-endian
  item_done();
}

uint32_t PickleWriter::memo_put() {
  if (next_memo_ < 0x100) {
    out_ += kBinPut;
    put_le(out_, next_memo_, 1);
  } else {
    out_ += kLongBinPut;
    put_le(out_, next_memo_, 4);
  }
  return next_memo_++;
}

void PickleWriter::recall(uint32_t id) {
  if (id < 0x100) {
    out_ += kBinGet;
    put_le(out_, id, 1);
  } else {
    out_ += kLongBinGet;
    put_le(out_, id, 4);
  }
  item_done();
}

void PickleWriter::str(std::string_view s, bool memo) {
  if (memo) {
    const auto it = memo_.find(s);
    if (it != memo_.end()) return recall(it->second);
  }
  out_ += kBinUnicode;
  put_le(out_, s.size(), 4);
  out_.append(s);
  if (memo) memo_.emplace(memo_text_.emplace_back(s), memo_put());
  item_done();
}

void PickleWriter::begin_dict() {
  out_ += kEmptyDict;
  out_ += kMark;
  open_.push_back({Kind::kDict});
}

void PickleWriter::begin_list() {
  out_ += kEmptyList;
  out_ += kMark;
  open_.push_back({Kind::kList});
}

void PickleWriter::begin_tuple() {
  out_ += kMark;
  open_.push_back({Kind::kTuple});
}

void PickleWriter::end_dict() {
  if (open_.empty() || open_.back().kind != Kind::kDict || open_.back().items % 2 != 0) {
    throw common::InternalError("pickle: end_dict without an open dict of whole key/value pairs");
  }
  out_ += kSetItems;
  open_.pop_back();
  item_done();
}

void PickleWriter::end_list() {
  if (open_.empty() || open_.back().kind != Kind::kList) throw common::InternalError("pickle: end_list");
  out_ += kAppends;
  open_.pop_back();
  item_done();
}

uint32_t PickleWriter::end_list_remembered() {
  if (open_.empty() || open_.back().kind != Kind::kList) throw common::InternalError("pickle: end_list");
  out_ += kAppends;
  open_.pop_back();
  // BINPUT before item_done(): a batch flush of the parent would put a MARK above the list.
  const uint32_t id = memo_put();
  item_done();
  return id;
}

void PickleWriter::end_tuple() {
  if (open_.empty() || open_.back().kind != Kind::kTuple) throw common::InternalError("pickle: end_tuple");
  out_ += kTuple;
  open_.pop_back();
  item_done();
}

std::string PickleWriter::finish() {
  if (!open_.empty()) throw common::InternalError("pickle: finish with open containers");
  out_ += kStop;
  return std::move(out_);
}

}  // namespace simumax::report
