-- Schema v10: the summaries are indexed in time order only.
--
-- An index by file first (activity_by_file, hour_totals_by_file) puts the
-- rows of one segment or hour at random places across the whole index, so
-- that every commit rewrote a page of it for nearly every row it added or
-- removed: 8 KiB of WAL or so for a 60-byte row. On a copy of the store, a
-- segment's 1,100 activity rows took 40 ms to add in ten batches and 38 ms to
-- delete with activity_by_file, 4 ms and 0.7 ms with (segment_id, file_id)
-- instead; the oldest hour of hourly totals, dropped under --max-size, took
-- 20 to 200 times as long with hour_totals_by_file as without. A collector at
-- its cap held the write lock for up to 400 ms dropping 8,192 rows of totals.
--
-- activity_by_segment_file keeps each segment's rows together, in file order:
-- new rows go to its last pages and pruned ones leave from its first. A file's
-- activity is found with one seek per segment of the window (6 ms for 1,440
-- segments, against 0.6 ms with the index by file): the reports walk the
-- window's segments and look the file up in each (query/filters.cpp).
-- hour_totals needs no index beside its key (hour, process_id, file_id): a
-- report filtered by file reads the hours of its window and keeps the file's
-- rows, as the reports without a filter read them all.

DROP INDEX activity_by_file;
CREATE INDEX activity_by_segment_file ON activity (segment_id, file_id);
DROP INDEX hour_totals_by_file;
