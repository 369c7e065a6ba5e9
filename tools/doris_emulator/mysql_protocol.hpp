#pragma once
// The server side of the MySQL client/server protocol as a Doris FE speaks
// it on its query port (9030): packet framing, HandshakeV10 with
// mysql_native_password, OK/ERR/EOF packets and text result sets. Pure
// functions over byte strings; query_port.cpp does the I/O.
//
// Hand-written because no packaged library serves this protocol: Boost.MySQL
// and libmysqlclient/libmariadb are client libraries only.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cdc2doris::emu::mysql {

// Capability flags (only those the emulator reads or announces).
constexpr uint32_t kLongPassword = 0x1, kFoundRows = 0x2, kLongFlag = 0x4, kConnectWithDb = 0x8,
                   kProtocol41 = 0x200, kTransactions = 0x2000, kSecureConnection = 0x8000,
                   kMultiResults = 0x20000, kPluginAuth = 0x80000, kConnectAttrs = 0x100000,
                   kPluginAuthLenencData = 0x200000;
constexpr uint32_t kServerCaps = kLongPassword | kFoundRows | kLongFlag | kConnectWithDb | kProtocol41 |
                                 kTransactions | kSecureConnection | kMultiResults | kPluginAuth |
                                 kConnectAttrs | kPluginAuthLenencData;
constexpr uint16_t kStatusAutocommit = 0x0002;

// Commands (first payload byte).
constexpr uint8_t kComQuit = 0x01, kComInitDb = 0x02, kComQuery = 0x03, kComFieldList = 0x04, kComPing = 0x0e;

// Column types used in result sets.
enum class Type : uint8_t {
  Tiny = 1, Short = 2, Long = 3, Float = 4, Double = 5, LongLong = 8, Date = 10, DateTime = 12,
  Json = 245, NewDecimal = 246, VarString = 253
};

struct ResultColumn {
  std::string name;
  Type type = Type::VarString;
  std::string table, schema;  // optional origin
  uint32_t length = 0;         // display length; 0: the type's default
};

struct HandshakeResponse {
  uint32_t caps = 0;
  std::string user, auth, db, plugin;
};

// Appends a length-encoded integer / string.
void put_lenenc(std::string* out, uint64_t v);
void put_lenenc_str(std::string* out, std::string_view s);

// Frames `payload` as one or more packets (payloads of 2^24-1 bytes are
// continued), advancing the sequence id.
void frame(std::string* wire, std::string_view payload, uint8_t* seq);

std::string handshake_v10(uint32_t conn_id, std::string_view scramble20, std::string_view server_version);
bool parse_handshake_response(std::string_view payload, HandshakeResponse* out);
std::string auth_switch_request(std::string_view scramble20);
// mysql_native_password: response == SHA1(pw) XOR SHA1(scramble + SHA1(SHA1(pw))); an
// empty password expects an empty response.
bool check_native_password(std::string_view scramble20, std::string_view response, std::string_view password);

std::string ok_packet(uint64_t affected_rows, uint16_t status);
std::string err_packet(uint16_t code, std::string_view sqlstate, std::string_view message);
std::string eof_packet(uint16_t status);
std::string column_definition(const ResultColumn& c);
std::string text_row(const std::vector<std::optional<std::string>>& values);

}  // namespace cdc2doris::emu::mysql
