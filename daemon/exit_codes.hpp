#pragma once
// Documented exit codes (README, docs/operations.md, `cdc2doris --help`).
namespace cdc2doris::daemon {
inline constexpr int kExitOk = 0;
inline constexpr int kExitFatal = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitState = 3;
inline constexpr int kExitShutdownDeadline = 4;
inline constexpr int kExitCheckFailed = 5;
}  // namespace cdc2doris::daemon
