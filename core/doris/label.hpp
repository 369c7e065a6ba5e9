#pragma once
// Label helpers. Doris labels must match ^[-_A-Za-z0-9:]{1,128}$ (reference
// §6) and are scoped per database, so the deterministic label of a
// (prefix, db, table, epoch) must stay unique and valid whatever the names.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cdc2doris::doris {

inline constexpr size_t kMaxLabelLength = 128;

bool is_valid_label(std::string_view label);

// Replaces every character outside [-_A-Za-z0-9:] by '_' (so "a.b" -> "a_b").
std::string sanitize_label_part(std::string_view part);

// 64-bit FNV-1a as 16 lower-case hex digits: stable across builds/platforms.
std::string stable_hash_hex(std::string_view s);

// "{prefix}_{db}_{table}_{epoch}", sanitised. If longer than 128 characters the
// middle (db_table) is replaced by a shortened part plus the stable hash of the
// unsanitised input, so distinct inputs keep distinct labels and the epoch
// suffix stays readable.
std::string make_label(std::string_view prefix, std::string_view db, std::string_view table, uint64_t epoch);

// Txn id from "Label [<label>] has already been used, relate to txn [<id>]".
std::optional<int64_t> parse_label_txn_id(std::string_view message);
// Txn id from "transaction [<id>] ..." (2PC messages).
std::optional<int64_t> parse_transaction_id(std::string_view message);

}  // namespace cdc2doris::doris
