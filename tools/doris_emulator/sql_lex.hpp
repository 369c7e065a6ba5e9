#pragma once
// The SQL lexer and token cursor shared by the HTTP SQL endpoint (sql.cpp)
// and the MySQL query port (query_exec.cpp). Errors are thrown as
// std::runtime_error with Doris' UserException text.
#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cdc2doris::emu::sqllex {

[[noreturn]] inline void fail(const std::string& msg) { throw std::runtime_error("errCode = 2, detailMessage = " + msg); }

struct Tok {
  enum T { Ident, QIdent, Str, Num, Punct, End } t;
  std::string s;
};

inline std::vector<Tok> tokenize(const std::string& sql) {
  std::vector<Tok> out;
  size_t i = 0;
  while (i < sql.size()) {
    char c = sql[i];
    if (std::isspace(static_cast<unsigned char>(c))) { ++i; continue; }
    if ((c == '-' && i + 1 < sql.size() && sql[i + 1] == '-') || c == '#') {
      while (i < sql.size() && sql[i] != '\n') ++i;
      continue;
    }
    if (c == '/' && i + 1 < sql.size() && sql[i + 1] == '*') {  // drivers prefix /* client version */
      size_t e = sql.find("*/", i + 2);
      if (e == std::string::npos) fail("Syntax error: unterminated comment");
      i = e + 2;
      continue;
    }
    if (c == '`') {
      size_t e = sql.find('`', i + 1);
      if (e == std::string::npos) fail("Syntax error: unterminated identifier");
      out.push_back({Tok::QIdent, sql.substr(i + 1, e - i - 1)});
      i = e + 1;
      continue;
    }
    if (c == '\'' || c == '"') {
      std::string s;
      size_t j = i + 1;
      for (; j < sql.size() && sql[j] != c; ++j) {
        if (sql[j] == '\\' && j + 1 < sql.size()) ++j;
        s.push_back(sql[j]);
      }
      if (j >= sql.size()) fail("Syntax error: unterminated string");
      out.push_back({Tok::Str, s});
      i = j + 1;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '-' && i + 1 < sql.size() && std::isdigit(static_cast<unsigned char>(sql[i + 1])))) {
      size_t j = i + 1;
      while (j < sql.size() && (std::isdigit(static_cast<unsigned char>(sql[j])) || sql[j] == '.')) ++j;
      out.push_back({Tok::Num, sql.substr(i, j - i)});
      i = j;
      continue;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i + 1;
      while (j < sql.size() && (std::isalnum(static_cast<unsigned char>(sql[j])) || sql[j] == '_')) ++j;
      out.push_back({Tok::Ident, sql.substr(i, j - i)});
      i = j;
      continue;
    }
    out.push_back({Tok::Punct, std::string(1, c)});
    ++i;
  }
  out.push_back({Tok::End, ""});
  return out;
}

inline std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

struct Parser {
  std::vector<Tok> t;
  size_t p = 0;
  const Tok& peek(size_t k = 0) const { return t[std::min(p + k, t.size() - 1)]; }
  bool kw(const char* w, size_t k = 0) const { return peek(k).t == Tok::Ident && upper(peek(k).s) == w; }
  bool accept(const char* w) {
    if (kw(w)) { ++p; return true; }
    return false;
  }
  void expect(const char* w) {
    if (!accept(w)) fail(std::string("Syntax error: expected ") + w + " near '" + peek().s + "'");
  }
  bool punct(char c, size_t k = 0) const { return peek(k).t == Tok::Punct && peek(k).s[0] == c; }
  bool accept_p(char c) {
    if (punct(c)) { ++p; return true; }
    return false;
  }
  void expect_p(char c) {
    if (!accept_p(c)) fail(std::string("Syntax error: expected '") + c + "' near '" + peek().s + "'");
  }
  std::string ident() {
    auto& k = peek();
    if (k.t != Tok::Ident && k.t != Tok::QIdent) fail("Syntax error: expected identifier near '" + k.s + "'");
    ++p;
    return k.s;
  }
  // [db.]name
  std::pair<std::string, std::string> qname(const std::string& default_db) {
    std::string a = ident();
    if (accept_p('.')) return {a, ident()};
    return {default_db, a};
  }
  bool at_end() const { return peek().t == Tok::End || (punct(';') && peek(1).t == Tok::End); }
  void skip_parens() {
    expect_p('(');
    int depth = 1;
    while (depth > 0) {
      if (peek().t == Tok::End) fail("Syntax error: unbalanced parentheses");
      if (punct('(')) ++depth;
      else if (punct(')')) --depth;
      ++p;
    }
  }
};

}  // namespace cdc2doris::emu::sqllex
