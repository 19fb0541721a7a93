#pragma once
// Writing query results: for people (table) and for programs (csv, json, jsonl).
//
// table  aligned columns, numbers to the right; byte columns (bytes, *_bytes,
//        size) in KiB/MiB/GiB; on a screen (shorten), long paths (path,
//        process, image, command_line, ...) shortened in the middle so that
//        the drive and the file name stay visible; whole otherwise
// csv    RFC 4180: CRLF line ends, fields with a comma, quote or line break
//        quoted, quotes doubled; NULL is an empty field; exact values
// json   an array of objects (an object of such arrays, by section, when a
//        report has several sections); NULL is null, numbers are numbers
// jsonl  one object per line; with several sections each object also names
//        its "section"

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "core/time_format.h"
#include "query/report.h"

namespace etwaudit {

enum class OutputFormat { table, csv, json, jsonl };

// nullopt-free parse: throws UsageError for an unknown name.
OutputFormat parse_output_format(const std::string& name);
// The format a file's extension names (.csv, .json, .jsonl or .ndjson,
// .txt a table), for --output without --format; nullopt for another.
std::optional<OutputFormat> output_format_of_file(const std::string& path);

// --local: every time in results (a text cell in ISO-8601 UTC,
// "2026-12-02T10:15:30.1234567Z") as the local clock shows it, with its
// offset ("2026-12-02T11:15:30.1234567+01:00"), to the same fraction.
void show_local_times(std::vector<Table>& results, const UtcOffsetAt& offset_at);

// A column of sizes in bytes (bytes, size, *_bytes, max_bytes): a table
// shows them in KiB, MiB, GiB.
bool is_bytes_column(const std::string& name);
// How the byte totals of results (their *_bytes columns) are known: there
// are none (no such column), all are, some are (a cell is empty: events
// recorded without a size, by fanotify), or none is (cells are empty, and
// no other holds more than 0).
enum class KnownBytes { no_column, all, some, unknown };
KnownBytes known_bytes(const std::vector<Table>& results);
// Empties the byte columns of results (where nothing is known, a 0 beside
// an empty cell says nothing either).
void forget_bytes(std::vector<Table>& results);

// shorten: tables shorten long paths (for a terminal; not for a file or a
// pipe, where every value is whole).
void write_results(std::ostream& out, const std::vector<Table>& results, OutputFormat format, bool shorten = false);

// "C:\Program Files\…\Binn\sqlservr.exe": at most max_width characters, keeping
// the start and the last component.
std::string shorten_path(const std::string& path, std::size_t max_width);

}  // namespace etwaudit
