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
// The label of a table's `part`-th load within one epoch: part 0 is the label
// above (so states written before several loads per epoch existed recover);
// part n > 0 ends in "_{epoch}-{n}". The '-' keeps it distinct from every
// part-0 label, which ends in '_' and digits only (table "t" epoch 5 part 1
// must not be table "t_5" epoch 1).
std::string make_label(std::string_view prefix, std::string_view db, std::string_view table, uint64_t epoch,
                       uint32_t part);

// Txn id from "Label [<label>] has already been used, relate to txn [<id>]".
std::optional<int64_t> parse_label_txn_id(std::string_view message);
// Txn id from "transaction [<id>] ..." (2PC messages).
std::optional<int64_t> parse_transaction_id(std::string_view message);

}  // namespace cdc2doris::doris
