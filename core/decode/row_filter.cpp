#include "core/decode/row_filter.hpp"

#include <algorithm>
#include <cctype>

namespace cdc2doris::decode {

namespace {

constexpr std::pair<Meta, const char*> kMetaNames[] = {
    {Meta::Op, "op"},
    {Meta::SourceTs, "source_ts"},
    {Meta::SourceDb, "source.db"},
    {Meta::SourceSchema, "source.schema"},
    {Meta::SourceTable, "source.table"},
    {Meta::Connector, "source.connector"},
    {Meta::Snapshot, "source.snapshot"},
    {Meta::Topic, "topic"},
    {Meta::Partition, "partition"},
    {Meta::Offset, "offset"},
    {Meta::Sequence, "sequence"},
};

// A decimal number split for exact comparison: sign, significant digits
// (in two pieces: before and after the point) and the power of ten of the
// first significant digit. No allocation: values are compared per row.
struct DecimalView {
  bool neg = false;
  std::string_view head, tail;  // significant digits = head + tail
  int64_t magnitude = 0;        // value = 0.d1d2d3... * 10^magnitude
  bool zero() const { return head.empty() && tail.empty(); }
  char digit(size_t i) const { return i < head.size() ? head[i] : i - head.size() < tail.size() ? tail[i - head.size()] : '0'; }
  size_t size() const { return head.size() + tail.size(); }
};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::optional<DecimalView> decimal_view(std::string_view s) {
  DecimalView d;
  size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) d.neg = s[i++] == '-';
  const size_t int_begin = i;
  while (i < s.size() && is_digit(s[i])) ++i;
  std::string_view ip = s.substr(int_begin, i - int_begin);
  std::string_view fp;
  if (i < s.size() && s[i] == '.') {
    const size_t frac_begin = ++i;
    while (i < s.size() && is_digit(s[i])) ++i;
    fp = s.substr(frac_begin, i - frac_begin);
    if (fp.empty()) return std::nullopt;
  }
  if (ip.empty()) return std::nullopt;
  int64_t exp = 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool eneg = false;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) eneg = s[i++] == '-';
    if (i == s.size()) return std::nullopt;
    for (; i < s.size() && is_digit(s[i]); ++i) {
      if (exp > 1'000'000'000) return std::nullopt;  // beyond any column's range
      exp = exp * 10 + (s[i] - '0');
    }
    if (eneg) exp = -exp;
  }
  if (i != s.size()) return std::nullopt;
  while (!ip.empty() && ip.front() == '0') ip.remove_prefix(1);
  while (!fp.empty() && fp.back() == '0') fp.remove_suffix(1);
  if (!ip.empty()) {
    d.magnitude = static_cast<int64_t>(ip.size()) + exp;
    if (fp.empty())
      while (!ip.empty() && ip.back() == '0') ip.remove_suffix(1);
    d.head = ip;
    d.tail = fp;
  } else {
    size_t lead = 0;
    while (lead < fp.size() && fp[lead] == '0') ++lead;
    d.magnitude = exp - static_cast<int64_t>(lead);
    d.tail = fp.substr(lead);
  }
  if (d.zero()) d.neg = false;
  return d;
}

}  // namespace

std::optional<int> compare_decimal_text(std::string_view a, std::string_view b) {
  const auto x = decimal_view(a), y = decimal_view(b);
  if (!x || !y) return std::nullopt;
  if (x->zero() || y->zero()) {
    if (x->zero() && y->zero()) return 0;
    if (x->zero()) return y->neg ? 1 : -1;
    return x->neg ? -1 : 1;
  }
  if (x->neg != y->neg) return x->neg ? -1 : 1;
  const int sign = x->neg ? -1 : 1;
  if (x->magnitude != y->magnitude) return x->magnitude < y->magnitude ? -sign : sign;
  const size_t n = std::max(x->size(), y->size());
  for (size_t i = 0; i < n; ++i) {
    const char p = x->digit(i), q = y->digit(i);
    if (p != q) return p < q ? -sign : sign;
  }
  return 0;
}

const char* to_string(Meta m) {
  for (const auto& [v, name] : kMetaNames)
    if (v == m) return name;
  return "?";
}

std::optional<Meta> parse_meta(std::string_view name) {
  for (const auto& [v, n] : kMetaNames)
    if (name == n) return v;
  return std::nullopt;
}

std::string meta_names() {
  std::string out;
  for (const auto& [v, n] : kMetaNames) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

// ---------------------------------------------------------------- the tree

struct RowFilter::Node {
  enum class Kind : uint8_t { And, Or, Not, Compare, In, IsNull, StartsWith, Matches };
  enum class Cmp : uint8_t { Eq, Ne, Lt, Le, Gt, Ge };
  struct Literal {
    FilterValue::Kind kind = FilterValue::Kind::String;  // String, Number or Bool
    std::string text;
  };
  Kind kind = Kind::Compare;
  Cmp cmp = Cmp::Eq;
  bool negated = false;  // NOT IN, IS NOT NULL, NOT STARTS WITH, NOT MATCHES
  int left = -1, right = -1;  // And, Or, Not
  bool is_meta = false;
  Meta meta = Meta::Op;
  size_t slot = 0;  // the column when !is_meta
  std::vector<Literal> literals;
  std::shared_ptr<const std::regex> re;
};

RowFilter::RowFilter() = default;
RowFilter::~RowFilter() = default;

// ---------------------------------------------------------------- parsing

class FilterParser {
 public:
  explicit FilterParser(std::string_view text) : s_(text) {}

  std::shared_ptr<const RowFilter> run() {
    auto f = std::make_shared<RowFilter>();
    f_ = f.get();
    f_->text_.assign(s_);
    skip_ws();
    if (at_end()) fail("an expression", pos_);
    f_->root_ = parse_or();
    skip_ws();
    if (!at_end()) fail("AND, OR or the end of the expression", pos_);
    return f;
  }

 private:
  using Node = RowFilter::Node;

  [[noreturn]] void fail(const std::string& expected, size_t at) const {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < at && i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    std::string got;
    if (at >= s_.size()) {
      got = "the end";
    } else {
      size_t n = 1;
      while (at + n < s_.size() && n < 20 && !std::isspace(static_cast<unsigned char>(s_[at + n]))) ++n;
      got = "'" + std::string(s_.substr(at, n)) + "'";
    }
    throw FilterSyntaxError("expected " + expected + ", got " + got, at, line, col);
  }

  bool at_end() const { return pos_ >= s_.size(); }
  void skip_ws() {
    while (!at_end() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  static bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$'; }

  // The keyword `kw` (case-insensitive, a whole word) at the position: consumed.
  bool keyword(std::string_view kw) {
    skip_ws();
    if (s_.size() - pos_ < kw.size()) return false;
    for (size_t i = 0; i < kw.size(); ++i)
      if (std::toupper(static_cast<unsigned char>(s_[pos_ + i])) != kw[i]) return false;
    if (pos_ + kw.size() < s_.size() && word_char(s_[pos_ + kw.size()])) return false;
    pos_ += kw.size();
    return true;
  }
  bool symbol(std::string_view sym) {
    skip_ws();
    if (s_.substr(pos_, sym.size()) != sym) return false;
    pos_ += sym.size();
    return true;
  }

  int add(Node n) {
    f_->nodes_.push_back(std::move(n));
    return static_cast<int>(f_->nodes_.size() - 1);
  }

  int parse_or() {
    int left = parse_and();
    while (keyword("OR")) {
      Node n;
      n.kind = Node::Kind::Or;
      n.left = left;
      n.right = parse_and();
      left = add(std::move(n));
    }
    return left;
  }
  int parse_and() {
    int left = parse_unary();
    while (keyword("AND")) {
      Node n;
      n.kind = Node::Kind::And;
      n.left = left;
      n.right = parse_unary();
      left = add(std::move(n));
    }
    return left;
  }
  int parse_unary() {
    if (keyword("NOT")) {
      Node n;
      n.kind = Node::Kind::Not;
      n.left = parse_unary();
      return add(std::move(n));
    }
    if (symbol("(")) {
      const int inner = parse_or();
      if (!symbol(")")) fail("')'", pos_);
      return inner;
    }
    return parse_predicate();
  }

  void operand(Node& n) {
    skip_ws();
    const size_t at = pos_;
    if (at_end()) fail("a column name, `quoted name` or @metadata", at);
    std::string name;
    if (s_[pos_] == '`') {
      const size_t close = s_.find('`', pos_ + 1);
      if (close == std::string_view::npos) fail("a closing '`'", s_.size());
      name.assign(s_.substr(pos_ + 1, close - pos_ - 1));
      if (name.empty()) fail("a column name between the backquotes", at);
      pos_ = close + 1;
    } else if (s_[pos_] == '@') {
      size_t end = pos_ + 1;
      while (end < s_.size() && (word_char(s_[end]) || s_[end] == '.')) ++end;
      const auto m = parse_meta(s_.substr(pos_ + 1, end - pos_ - 1));
      if (!m) fail("metadata (@" + meta_names_with_at() + ")", at);
      n.is_meta = true;
      n.meta = *m;
      pos_ = end;
      return;
    } else if (s_[pos_] == '"') {
      fail("a column name (a name with other characters between backquotes: `a b`; strings take single quotes)", at);
    } else {
      size_t end = pos_;
      while (end < s_.size() && word_char(s_[end])) ++end;
      if (end == pos_ || is_digit_char(s_[pos_]))
        fail("a column name, `quoted name` or @metadata", at);
      name.assign(s_.substr(pos_, end - pos_));
      if (is_reserved(name)) fail("a column name (" + upper(name) + " is a keyword: write `" + name + "`)", at);
      pos_ = end;
    }
    auto& cols = f_->columns_;
    auto it = std::find(cols.begin(), cols.end(), name);
    n.slot = static_cast<size_t>(it - cols.begin());
    if (it == cols.end()) cols.push_back(std::move(name));
  }

  static bool is_digit_char(char c) { return c >= '0' && c <= '9'; }
  static std::string upper(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
  }
  static bool is_reserved(const std::string& w) {
    const std::string u = upper(w);
    for (const char* k : {"AND", "OR", "NOT", "IN", "IS", "NULL", "TRUE", "FALSE", "STARTS", "WITH", "MATCHES"})
      if (u == k) return true;
    return false;
  }
  static std::string meta_names_with_at() {
    std::string out;
    for (Meta m : kAllMeta) out += (out.empty() ? "" : ", @") + std::string(to_string(m));
    return out;
  }

  std::string string_literal() {
    skip_ws();
    if (at_end() || s_[pos_] != '\'') fail("a 'string'", pos_);
    const size_t open = pos_;
    std::string out;
    for (size_t i = pos_ + 1; i < s_.size(); ++i) {
      if (s_[i] != '\'') {
        out.push_back(s_[i]);
        continue;
      }
      if (i + 1 < s_.size() && s_[i + 1] == '\'') {
        out.push_back('\'');
        ++i;
        continue;
      }
      pos_ = i + 1;
      return out;
    }
    fail("a closing quote for the string opened here", open);
  }

  Node::Literal literal() {
    skip_ws();
    const size_t at = pos_;
    if (!at_end() && s_[pos_] == '\'') return {FilterValue::Kind::String, string_literal()};
    if (keyword("TRUE")) return {FilterValue::Kind::Bool, "true"};
    if (keyword("FALSE")) return {FilterValue::Kind::Bool, "false"};
    if (keyword("NULL")) fail("a value (a comparison with NULL is never true: use IS NULL / IS NOT NULL)", at);
    size_t end = pos_;
    while (end < s_.size() && (word_char(s_[end]) || s_[end] == '.' || s_[end] == '-' || s_[end] == '+')) {
      // A sign only leads the number or follows its exponent.
      if ((s_[end] == '-' || s_[end] == '+') && end != pos_ && s_[end - 1] != 'e' && s_[end - 1] != 'E') break;
      ++end;
    }
    const std::string_view num = s_.substr(pos_, end - pos_);
    if (num.empty() || !compare_decimal_text(num, num)) fail("a value: a 'string', a number, TRUE or FALSE", at);
    pos_ = end;
    return {FilterValue::Kind::Number, std::string(num)};
  }

  int parse_predicate() {
    Node n;
    operand(n);
    skip_ws();
    const size_t at = pos_;
    if (keyword("IS")) {
      n.kind = Node::Kind::IsNull;
      n.negated = keyword("NOT");
      if (!keyword("NULL")) fail("NULL", pos_);
      return add(std::move(n));
    }
    const bool negated = keyword("NOT");
    if (keyword("IN")) {
      n.kind = Node::Kind::In;
      n.negated = negated;
      if (!symbol("(")) fail("'(' opening the IN list", pos_);
      do n.literals.push_back(literal());
      while (symbol(","));
      if (!symbol(")")) fail("',' or ')' closing the IN list", pos_);
      return add(std::move(n));
    }
    if (keyword("STARTS")) {
      if (!keyword("WITH")) fail("WITH", pos_);
      n.kind = Node::Kind::StartsWith;
      n.negated = negated;
      n.literals.push_back({FilterValue::Kind::String, string_literal()});
      return add(std::move(n));
    }
    const bool tilde = !negated && symbol("~");
    if (tilde || keyword("MATCHES")) {
      n.kind = Node::Kind::Matches;
      n.negated = negated;
      skip_ws();
      const size_t re_at = pos_;
      std::string pattern = string_literal();
      try {
        n.re = std::make_shared<const std::regex>(pattern, std::regex::ECMAScript | std::regex::optimize);
      } catch (const std::regex_error& e) {
        fail(std::string("a valid regular expression (ECMAScript): ") + e.what() + ";", re_at);
      }
      n.literals.push_back({FilterValue::Kind::String, std::move(pattern)});
      return add(std::move(n));
    }
    if (negated) fail("IN, STARTS WITH or MATCHES after NOT", pos_);
    n.kind = Node::Kind::Compare;
    if (symbol("<=")) n.cmp = Node::Cmp::Le;
    else if (symbol(">=")) n.cmp = Node::Cmp::Ge;
    else if (symbol("!=") || symbol("<>")) n.cmp = Node::Cmp::Ne;
    else if (symbol("=")) n.cmp = Node::Cmp::Eq;
    else if (symbol("<")) n.cmp = Node::Cmp::Lt;
    else if (symbol(">")) n.cmp = Node::Cmp::Gt;
    else fail("a comparison (=, !=, <, <=, >, >=), IN, IS [NOT] NULL, STARTS WITH or MATCHES", at);
    n.literals.push_back(literal());
    return add(std::move(n));
  }

  std::string_view s_;
  size_t pos_ = 0;
  RowFilter* f_ = nullptr;
};

std::shared_ptr<const RowFilter> RowFilter::parse(std::string_view text) { return FilterParser(text).run(); }

// ---------------------------------------------------------------- evaluation

namespace {

// Three-valued logic, with a fourth value for "depends on a column the
// record left out": it loses to a decisive false (AND) or true (OR).
enum class Tv : uint8_t { False, True, Unknown, Unavailable };

Tv tv(bool b) { return b ? Tv::True : Tv::False; }

// Compares a value with a literal: -1/0/1, or nullopt when they are not
// comparable (a number literal against a non-numeric value, ...).
std::optional<int> compare(const FilterValue& v, const RowFilter::Node::Literal& lit) {
  using K = FilterValue::Kind;
  switch (lit.kind) {
    case K::Number:
      if (v.kind == K::Number || v.kind == K::String) return compare_decimal_text(v.text, lit.text);
      return std::nullopt;
    case K::Bool:
      if (v.kind == K::Bool) return v.text == lit.text ? 0 : (v.text == "true" ? 1 : -1);
      if (v.kind == K::Number) {  // MySQL's TINYINT(1) arrives as a number
        const auto c = compare_decimal_text(v.text, lit.text == "true" ? "1" : "0");
        if (c && *c == 0) return 0;
      }
      return std::nullopt;
    default: {
      const int c = v.text.compare(lit.text);
      return c < 0 ? -1 : c > 0 ? 1 : 0;
    }
  }
}

bool holds(RowFilter::Node::Cmp cmp, std::optional<int> c) {
  using C = RowFilter::Node::Cmp;
  if (!c) return cmp == C::Ne;  // not comparable: only "differs" holds
  switch (cmp) {
    case C::Eq: return *c == 0;
    case C::Ne: return *c != 0;
    case C::Lt: return *c < 0;
    case C::Le: return *c <= 0;
    case C::Gt: return *c > 0;
    case C::Ge: return *c >= 0;
  }
  return false;
}

struct Evaluator {
  const std::vector<RowFilter::Node>& nodes;
  const RowFilter::Inputs& in;
  int unavailable_slot = -1;
  int missing_slot = -1;

  Tv eval(int i) {
    const auto& n = nodes[static_cast<size_t>(i)];
    using K = RowFilter::Node::Kind;
    switch (n.kind) {
      case K::And: {
        const Tv a = eval(n.left);
        if (a == Tv::False || missing_slot >= 0) return Tv::False;
        const Tv b = eval(n.right);
        if (b == Tv::False) return Tv::False;
        if (a == Tv::Unavailable || b == Tv::Unavailable) return Tv::Unavailable;
        return a == Tv::Unknown || b == Tv::Unknown ? Tv::Unknown : Tv::True;
      }
      case K::Or: {
        const Tv a = eval(n.left);
        if (a == Tv::True || missing_slot >= 0) return Tv::True;
        const Tv b = eval(n.right);
        if (b == Tv::True) return Tv::True;
        if (a == Tv::Unavailable || b == Tv::Unavailable) return Tv::Unavailable;
        return a == Tv::Unknown || b == Tv::Unknown ? Tv::Unknown : Tv::False;
      }
      case K::Not: {
        const Tv a = eval(n.left);
        return a == Tv::True ? Tv::False : a == Tv::False ? Tv::True : a;
      }
      default: break;
    }
    const FilterValue v = n.is_meta ? in.meta(n.meta) : in.column(n.slot);
    using VK = FilterValue::Kind;
    if (v.kind == VK::Missing) {
      if (missing_slot < 0) missing_slot = static_cast<int>(n.slot);
      return Tv::False;
    }
    if (v.kind == VK::Unavailable) {
      if (unavailable_slot < 0) unavailable_slot = static_cast<int>(n.slot);
      return Tv::Unavailable;
    }
    if (n.kind == K::IsNull) return tv((v.kind == VK::Null) != n.negated);
    if (v.kind == VK::Null) return Tv::Unknown;
    switch (n.kind) {
      case K::Compare: return tv(holds(n.cmp, compare(v, n.literals.front())));
      case K::In: {
        bool found = false;
        for (const auto& lit : n.literals) {
          const auto c = compare(v, lit);
          if (c && *c == 0) {
            found = true;
            break;
          }
        }
        return tv(found != n.negated);
      }
      case K::StartsWith: return tv(v.text.starts_with(n.literals.front().text) != n.negated);
      case K::Matches:
        return tv(std::regex_search(v.text.begin(), v.text.end(), *n.re) != n.negated);
      default: return Tv::False;
    }
  }
};

}  // namespace

RowFilter::Result RowFilter::evaluate(const Inputs& in) const {
  Evaluator e{nodes_, in};
  const Tv t = e.eval(root_);
  if (e.missing_slot >= 0) return {Verdict::Missing, e.missing_slot};
  if (t == Tv::Unavailable) return {Verdict::Unavailable, e.unavailable_slot};
  return {t == Tv::True ? Verdict::Match : Verdict::NoMatch, -1};
}

}  // namespace cdc2doris::decode
