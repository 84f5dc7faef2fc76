#include "engine/compare/gemm_shape.hpp"

#include <charconv>
#include <utility>

namespace simumax::compare {

namespace {

bool positive(const std::vector<int64_t>& v) {
  for (int64_t x : v) {
    if (x <= 0) return false;
  }
  return true;
}

std::optional<GemmShape> checked(GemmShape s) {
  if (s.b <= 0 || s.m <= 0 || s.k <= 0 || s.n <= 0) return std::nullopt;
  return s;
}

// x [.., m, k] @ w [k, n] (mm / addmm), or x [b, m, k] @ w [b, k, n] (bmm / baddbmm).
std::optional<GemmShape> product(const std::vector<int64_t>& x, const std::vector<int64_t>& w) {
  if (!positive(x) || !positive(w)) return std::nullopt;
  if (x.size() == 2 && w.size() == 2 && x[1] == w[0]) return checked({1, x[0], x[1], w[1]});
  if (x.size() == 3 && w.size() == 3 && x[0] == w[0] && x[2] == w[1]) return checked({x[0], x[1], x[2], w[2]});
  return std::nullopt;
}

// aten::linear: x [..., k] and the weight [n, k]; the leading dimensions fold into m.
std::optional<GemmShape> linear(const std::vector<int64_t>& x, const std::vector<int64_t>& w) {
  if (x.empty() || w.size() != 2 || !positive(x) || !positive(w) || x.back() != w[1]) return std::nullopt;
  int64_t m = 1;
  for (size_t i = 0; i + 1 < x.size(); ++i) m *= x[i];
  return checked({1, m, w[1], w[0]});
}

}  // namespace

std::optional<std::vector<std::vector<int64_t>>> parse_input_dims(std::string_view t) {
  std::vector<std::vector<int64_t>> out;
  size_t i = 0;
  const auto eat = [&](char c) {
    if (i < t.size() && t[i] == c) {
      ++i;
      return true;
    }
    return false;
  };
  if (!eat('[')) return std::nullopt;
  if (eat(']')) return i == t.size() ? std::optional(out) : std::nullopt;
  do {
    if (!eat('[')) return std::nullopt;
    std::vector<int64_t> dims;
    if (!eat(']')) {
      do {
        int64_t v = 0;
        const auto [end, ec] = std::from_chars(t.data() + i, t.data() + t.size(), v);
        if (ec != std::errc()) return std::nullopt;
        i = static_cast<size_t>(end - t.data());
        dims.push_back(v);
      } while (eat(','));
      if (!eat(']')) return std::nullopt;
    }
    out.push_back(std::move(dims));
  } while (eat(','));
  if (!eat(']') || i != t.size()) return std::nullopt;
  return out;
}

bool is_gemm_op(std::string_view name) {
  return name == "aten::mm" || name == "aten::addmm" || name == "aten::bmm" || name == "aten::baddbmm" ||
         name == "aten::linear";
}

std::optional<GemmShape> gemm_shape(std::string_view op, std::string_view dims) {
  if (!is_gemm_op(op)) return std::nullopt;
  const auto d = parse_input_dims(dims);
  if (!d) return std::nullopt;
  const auto& a = *d;
  if ((op == "aten::mm" || op == "aten::bmm") && a.size() >= 2) return product(a[0], a[1]);
  if ((op == "aten::addmm" || op == "aten::baddbmm") && a.size() >= 3) return product(a[1], a[2]);
  if (op == "aten::linear" && a.size() >= 2) return linear(a[0], a[1]);
  return std::nullopt;
}

std::optional<AttentionShape> attention_shape(std::string_view op, std::string_view dims) {
  struct Known {
    const char* name;
    bool heads_first;  // [b, heads, s, d] (the SDPA ops); else [b, s, heads, d]
    bool backward;
  };
  static constexpr Known kOps[] = {
      {"aten::scaled_dot_product_attention", true, false},
      {"aten::_scaled_dot_product_flash_attention", true, false},
      {"aten::_scaled_dot_product_flash_attention_backward", true, true},
      {"aten::_scaled_dot_product_efficient_attention", true, false},
      {"aten::_scaled_dot_product_efficient_attention_backward", true, true},
      {"aten::_scaled_dot_product_cudnn_attention", true, false},
      {"aten::_scaled_dot_product_cudnn_attention_backward", true, true},
      {"aten::_flash_attention_forward", false, false},
      {"aten::_flash_attention_backward", false, true},
      {"aten::_efficient_attention_forward", false, false},
      {"aten::_efficient_attention_backward", false, true},
      {"flash_attn::_flash_attn_forward", false, false},
      {"flash_attn::_flash_attn_backward", false, true},
  };
  const Known* known = nullptr;
  for (const auto& k : kOps) {
    if (op == k.name) known = &k;
  }
  if (known == nullptr) return std::nullopt;
  const auto d = parse_input_dims(dims);
  const size_t first = known->backward ? 1 : 0;  // the backward's first argument is the output gradient
  if (!d || d->size() < first + 3) return std::nullopt;
  const auto& q = (*d)[first];
  const auto& k = (*d)[first + 1];
  const auto& v = (*d)[first + 2];
  if (q.size() != 4 || k.size() != 4 || v.size() != 4 || !positive(q) || !positive(k) || !positive(v)) {
    return std::nullopt;
  }
  const size_t hi = known->heads_first ? 1 : 2, si = known->heads_first ? 2 : 1;
  AttentionShape s{q[0], q[si], q[hi], k[hi], q[3], v[3], known->backward};
  if (k[0] != q[0] || v[0] != q[0] || k[si] != q[si] || v[si] != q[si] || v[hi] != k[hi] || k[3] != q[3]) {
    return std::nullopt;
  }
  return s;
}

std::optional<GemmShape> gemm_shape_of_key(std::string_view key) {
  GemmShape s;
  int found = 0;
  const std::pair<const char*, int64_t*> fields[] = {{"b=", &s.b}, {"m=", &s.m}, {"k=", &s.k}, {"n=", &s.n}};
  for (const auto& [name, field] : fields) {
    const std::string_view n(name);
    size_t at = key.starts_with(n) ? 0 : key.find(std::string(", ") + name);
    if (at == std::string_view::npos) continue;
    at += at == 0 ? n.size() : n.size() + 2;
    const auto [end, ec] = std::from_chars(key.data() + at, key.data() + key.size(), *field);
    if (ec == std::errc()) ++found;
  }
  return found == 4 ? checked(s) : std::nullopt;
}

}  // namespace simumax::compare
