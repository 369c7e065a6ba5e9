// Users and privileges as Doris' FE keeps them (fe mysql/privilege/Auth.java,
// Privilege.java, PrivBitSet.java; statements as regression-test/suites/
// account_p0 uses them): CREATE USER, DROP USER, GRANT/REVOKE of the
// database and table privileges on *.*, db.* and db.tbl, SHOW GRANTS, and
// the privilege checks of DDL statements. Roles, column privileges, catalogs
// other than `internal`, host patterns other than '%' and password policies
// are not modelled (docs/doris-emulator.md).
#include "tools/doris_emulator/engine.hpp"
#include "tools/doris_emulator/sql_lex.hpp"

#include <boost/json.hpp>

#include <array>

namespace cdc2doris::emu {

using namespace sqllex;

namespace {

struct PrivName {
  const char* sql;   // GRANT spelling
  const char* shown; // SHOW GRANTS / PrivBitSet.toString spelling
  uint32_t bit;
};
constexpr std::array<PrivName, 9> kPrivs{{
    {"NODE_PRIV", "Node_priv", Engine::kNodePriv},
    {"ADMIN_PRIV", "Admin_priv", Engine::kAdminPriv},
    {"GRANT_PRIV", "Grant_priv", Engine::kGrantPriv},
    {"SELECT_PRIV", "Select_priv", Engine::kSelectPriv},
    {"LOAD_PRIV", "Load_priv", Engine::kLoadPriv},
    {"ALTER_PRIV", "Alter_priv", Engine::kAlterPriv},
    {"CREATE_PRIV", "Create_priv", Engine::kCreatePriv},
    {"DROP_PRIV", "Drop_priv", Engine::kDropPriv},
    {"USAGE_PRIV", "Usage_priv", Engine::kUsagePriv},
}};

// PrivBitSet.toString: the names in Privilege order, comma separated (the
// form SHOW GRANTS prints, e.g. "internal.db: Select_priv,Load_priv").
std::string shown(uint32_t bits) {
  std::string r;
  for (const auto& p : kPrivs)
    if (bits & p.bit) r += (r.empty() ? "" : ",") + std::string(p.shown);
  return r;
}

// 'u'@'%', u, 'u', u@'h': the user name (the host is not modelled).
std::string user_identity(Parser& ps) {
  const Tok& t = ps.peek();
  if (t.t != Tok::Str && t.t != Tok::Ident && t.t != Tok::QIdent) fail("Syntax error near '" + t.s + "'");
  std::string name = t.s;
  ++ps.p;
  if (ps.accept_p('@')) ++ps.p;
  return name;
}

std::string quoted_identity(const std::string& user) { return "'" + user + "'@'%'"; }

// GRANT/REVOKE privilege list: LOAD_PRIV, ALTER_PRIV, ... or ALL.
uint32_t priv_list(Parser& ps) {
  uint32_t bits = 0;
  do {
    std::string w = upper(ps.ident());
    if (w == "ALL") {
      ps.accept("PRIVILEGES");
      bits |= Engine::kSelectPriv | Engine::kLoadPriv | Engine::kAlterPriv | Engine::kCreatePriv | Engine::kDropPriv;
      continue;
    }
    bool found = false;
    for (const auto& p : kPrivs)
      if (w == p.sql) {
        bits |= p.bit;
        found = true;
      }
    if (!found) fail("Unknown privilege type " + w);
  } while (ps.accept_p(','));
  return bits;
}

// *.*, db.*, db.tbl, internal.db.tbl -> "*.*" | "db.*" | "db.tbl".
std::string grant_target(Parser& ps) {
  std::vector<std::string> parts;
  do {
    if (ps.accept_p('*')) parts.push_back("*");
    else parts.push_back(ps.ident());
  } while (ps.accept_p('.'));
  if (parts.size() == 3 && parts[0] == "internal") parts.erase(parts.begin());
  if (parts.size() != 2) fail("Syntax error: expected db.table, db.* or *.*");
  if (parts[0] == "*" && parts[1] != "*") fail("Syntax error: *.tbl is not a valid target");
  return parts[0] + "." + parts[1];
}

}  // namespace

Engine::ActingAs::ActingAs(Engine& e, std::string user, std::string host)
    : e_(e), prev_user_(std::move(e.sql_user_)), prev_host_(std::move(e.sql_host_)) {
  e_.sql_user_ = std::move(user);
  e_.sql_host_ = std::move(host);
}

Engine::ActingAs::~ActingAs() {
  e_.sql_user_ = std::move(prev_user_);
  e_.sql_host_ = std::move(prev_host_);
}

bool Engine::has_priv(const std::string& user, const std::string& db, const std::string& table, uint32_t want) const {
  if (superusers_.count(user)) return true;
  auto it = grants_.find(user);
  if (it == grants_.end()) return false;
  want |= kAdminPriv;  // PrivPredicate.LOAD / ALTER / CREATE all accept ADMIN_PRIV
  uint32_t held = 0;
  for (const std::string& k : {std::string("*.*"), db + ".*", table.empty() ? std::string() : db + "." + table})
    if (auto g = it->second.find(k); !k.empty() && g != it->second.end()) held |= g->second;
  // Doris' database-level SHOW checks also pass with a table privilege in
  // the database (Auth.checkDbPriv -> checkTblInDbPriv); the emulator checks
  // no SHOW, and its one database-level check (CREATE DATABASE) wants a
  // *.* or db.* grant as Doris does.
  return (held & want) != 0;
}

void Engine::check_ddl_priv(const std::string& cur_db, const std::string& stmt) const {
  if (sql_user_.empty() || superusers_.count(sql_user_)) return;
  Parser ps{tokenize(stmt)};
  // ErrorCode.ERR_TABLEACCESS_DENIED_ERROR (1142): "%s command denied to user
  // '%s'@'%s' for table '%s'", reported by fe AlterTableStmt/CreateTableStmt/
  // DropTableStmt.analyze with the table as "db: tbl".
  auto denied = [&](const char* command, const std::pair<std::string, std::string>& q) {
    fail(std::string(command) + " command denied to user '" + sql_user_ + "'@'" + sql_host_ + "' for table '" +
         q.first + ": " + q.second + "'");
  };
  auto table_after = [&]() {
    if (ps.accept("IF")) {
      ps.accept("NOT");
      ps.expect("EXISTS");
    }
    return ps.qname(cur_db);
  };
  if (ps.accept("ALTER")) {
    if (!ps.accept("TABLE")) return;
    auto q = table_after();
    if (!has_priv(sql_user_, q.first, q.second, kAlterPriv)) denied("ALTER TABLE", q);
  } else if (ps.accept("CREATE")) {
    if (ps.accept("DATABASE") || ps.accept("SCHEMA")) {
      std::string name = table_after().second;
      // ErrorCode.ERR_DBACCESS_DENIED_ERROR (1044), fe CreateDbStmt.
      if (!has_priv(sql_user_, name, "", kCreatePriv))
        fail("Access denied for user '" + sql_user_ + "'@'" + sql_host_ + "' to database '" + name + "'");
      return;
    }
    if (!ps.accept("TABLE")) return;
    auto q = table_after();
    if (!has_priv(sql_user_, q.first, q.second, kCreatePriv)) denied("CREATE", q);
  } else if (ps.accept("DROP")) {
    if (!ps.accept("TABLE")) return;
    auto q = table_after();
    if (!has_priv(sql_user_, q.first, q.second, kDropPriv)) denied("DROP", q);
  } else if (ps.accept("TRUNCATE")) {
    ps.accept("TABLE");
    auto q = ps.qname(cur_db);
    if (!has_priv(sql_user_, q.first, q.second, kLoadPriv)) denied("TRUNCATE TABLE", q);
  }
}

bool Engine::exec_account_sql(const std::string& stmt, std::string* result) {
  Parser ps{tokenize(stmt)};
  const bool create = ps.kw("CREATE") && ps.kw("USER", 1);
  const bool drop = ps.kw("DROP") && ps.kw("USER", 1);
  const bool grant = ps.kw("GRANT");
  const bool revoke = ps.kw("REVOKE");
  const bool show = ps.kw("SHOW") && (ps.kw("GRANTS", 1) || (ps.kw("ALL", 1) && ps.kw("GRANTS", 2)));
  if (!(create || drop || grant || revoke || show)) return false;
  const bool checked = !sql_user_.empty() && !superusers_.count(sql_user_);
  auto need_grant_priv = [&]() {
    // ErrorCode.ERR_SPECIFIC_ACCESS_DENIED_ERROR, as fe CreateUserStmt /
    // GrantStmt.analyze report it.
    if (checked && !has_priv(sql_user_, "", "", kGrantPriv))
      fail("Access denied; you need (at least one of) the (GRANT) privilege(s) for this operation");
  };
  auto known = [&](const std::string& u) { return cfg_.users.count(u) != 0; };
  if (create || drop) {
    ps.p += 2;
    bool cond = false;
    if (ps.accept("IF")) {
      if (create) ps.expect("NOT");
      ps.expect("EXISTS");
      cond = true;
    }
    std::string user = user_identity(ps);
    need_grant_priv();
    if (create) {
      std::string pw;
      if (ps.accept("IDENTIFIED")) {
        ps.expect("BY");
        ps.accept("PASSWORD");
        if (ps.peek().t != Tok::Str) fail("Syntax error near '" + ps.peek().s + "'");
        pw = ps.peek().s;
        ++ps.p;
      }
      if (known(user)) {
        if (cond) return true;
        fail("User " + quoted_identity(user) + " already exist");  // fe Auth.createUserInternal
      }
      cfg_.users[user] = pw;
      grants_[user];
    } else {
      if (!known(user)) {
        if (cond) return true;
        fail("User " + quoted_identity(user) + " does not exist");  // fe Auth.dropUserInternal
      }
      if (superusers_.count(user)) fail("Can not drop user " + user);
      cfg_.users.erase(user);
      grants_.erase(user);
    }
    return true;
  }
  if (grant || revoke) {
    ++ps.p;
    uint32_t bits = priv_list(ps);
    ps.expect("ON");
    std::string target = grant_target(ps);
    ps.expect(grant ? "TO" : "FROM");
    std::string user = user_identity(ps);
    need_grant_priv();
    if (!known(user)) fail("user " + quoted_identity(user) + " does not exist");  // fe Auth.grantInternal
    if (superusers_.count(user)) return true;  // root/admin hold everything; revoking is refused in Doris too
    auto& g = grants_[user];
    if (grant) g[target] |= bits;
    else if (auto it = g.find(target); it != g.end()) {
      it->second &= ~bits;
      if (it->second == 0) g.erase(it);
    }
    return true;
  }
  // SHOW [ALL] GRANTS [FOR user]: columns of fe Auth.getUserAuthInfo
  // (AuthProcDir.TITLE_NAMES, 2.1), FeConstants.null_string "\N" when empty.
  const bool all = ps.kw("ALL", 1);
  ps.p += all ? 3 : 2;
  std::vector<std::string> users;
  if (ps.accept("FOR")) {
    std::string u = user_identity(ps);
    if (checked && u != sql_user_) need_grant_priv();
    if (!known(u)) fail("User " + quoted_identity(u) + " does not exist");
    users.push_back(u);
  } else if (all) {
    need_grant_priv();
    for (const auto& [u, pw] : cfg_.users) users.push_back(u);
  } else {
    users.push_back(sql_user_.empty() ? "root" : sql_user_);
  }
  const std::string null_string = "\\N";
  boost::json::array rows;
  for (const auto& u : users) {
    const bool super = superusers_.count(u) != 0;
    std::string global = super ? shown(kNodePriv | kAdminPriv) : null_string;
    std::string dbs = "internal.information_schema: Select_priv";  // every user may read it
    std::string tbls;
    if (auto it = grants_.find(u); it != grants_.end())
      for (const auto& [target, bits] : it->second) {
        auto dot = target.find('.');
        if (target == "*.*") global = shown(bits);
        else if (target.substr(dot + 1) == "*") dbs += "; internal." + target.substr(0, dot) + ": " + shown(bits);
        else tbls += (tbls.empty() ? "" : "; ") + std::string("internal.") + target + ": " + shown(bits);
      }
    const auto pw = cfg_.users.find(u);
    rows.push_back(boost::json::array{quoted_identity(u), "", pw != cfg_.users.end() && !pw->second.empty() ? "Yes" : "No",
                                      u == "root" ? "operator" : super ? "admin" : "", global, null_string, dbs,
                                      tbls.empty() ? null_string : tbls, null_string, null_string, null_string});
  }
  boost::json::array meta;
  for (const char* n : {"UserIdentity", "Comment", "Password", "Roles", "GlobalPrivs", "CatalogPrivs", "DatabasePrivs",
                        "TablePrivs", "ColPrivs", "ResourcePrivs", "WorkloadGroupPrivs"})
    meta.push_back(boost::json::object{{"name", n}, {"type", "CHAR"}});
  *result = boost::json::serialize(
      boost::json::object{{"type", "result_set"}, {"meta", meta}, {"data", rows}, {"time", 0}});
  return true;
}

}  // namespace cdc2doris::emu
