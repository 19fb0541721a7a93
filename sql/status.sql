-- name: status
-- description: The state of a database: its size, the events and totals it keeps, retention, and the last run.
-- param: path        the database's path
-- param: file_bytes  size of the database file on disk
-- param: wal_bytes   size of its -wal file
-- param: used_bytes  bytes of the pages in use; reusable_bytes, of the free ones
-- param: schema_version  PRAGMA user_version
-- param: now         the present, ns
-- param: stale_after a run open without a commit for this long (ns) is reported as possibly stuck
-- param: running     1 while a process holds the writer lock (a collector runs), else 0
-- section: database
SELECT :path AS path,
       :file_bytes AS file_bytes,
       :wal_bytes AS wal_bytes,
       :used_bytes AS used_bytes,
       :reusable_bytes AS reusable_bytes,
       :schema_version AS schema_version;

-- section: raw_events
SELECT (SELECT coalesce(sum(events), 0) FROM segments WHERE pruned IS NULL) AS rows,
       kept.events, kept.failed,
       iso_time((SELECT min(min_time) FROM segments WHERE pruned IS NULL)) AS oldest,
       iso_time((SELECT max(max_time) FROM segments WHERE pruned IS NULL)) AS newest,
       (SELECT count(*) FROM segments WHERE pruned IS NULL) AS segments
FROM (SELECT coalesce(sum(a.events + a.failed), 0) AS events, coalesce(sum(a.failed), 0) AS failed
      FROM segments s JOIN activity a ON a.segment_id = s.segment_id
      WHERE s.pruned IS NULL) AS kept;

-- section: long_term_totals
-- (The hourly totals of pruned events: hour_totals, and the activity rows of
-- pruned segments that were alone in their hour.)
SELECT iso_time((SELECT min(hour) FROM (SELECT min(hour) AS hour FROM hour_totals UNION ALL
                                         SELECT min(hour) FROM segments WHERE pruned IS NOT NULL))
                * 3600000000000) AS hourly_from,
       iso_time((SELECT max(hour) FROM (SELECT max(hour) AS hour FROM hour_totals UNION ALL
                                         SELECT max(hour) FROM segments WHERE pruned IS NOT NULL))
                * 3600000000000) AS hourly_until,
       (SELECT count(*) FROM hour_totals) +
       (SELECT count(*) FROM segments s JOIN activity a ON a.segment_id = s.segment_id
        WHERE s.pruned IS NOT NULL) AS hourly_rows,
       iso_time((SELECT min(minute) FROM minute_totals) * 60000000000) AS minutes_from,
       iso_time((SELECT max(minute) FROM minute_totals) * 60000000000) AS minutes_until,
       (SELECT count(*) FROM files) AS files,
       (SELECT count(*) FROM processes) AS processes;

-- section: retention
SELECT CASE WHEN keep_ns IS NULL THEN NULL
            WHEN keep_ns % 86400000000000 = 0 THEN (keep_ns / 86400000000000) || 'd'
            WHEN keep_ns % 3600000000000 = 0 THEN (keep_ns / 3600000000000) || 'h'
            ELSE (keep_ns / 1000000000) || 's' END AS keep,
       max_bytes,
       iso_time(pruned_before) AS pruned_before,
       pruned_events, pruned_rows, pruned_segments,
       iso_time(totals_pruned_before) AS hourly_totals_dropped_before,
       iso_time(last_prune_at) AS last_prune
FROM retention;

-- section: last_run
SELECT run_id, source, host, pid,
       iso_time(started_at) AS started,
       iso_time(last_commit_at) AS last_commit,
       iso_time(stopped_at) AS stopped,
       events_received AS received, events_written AS written, events_lost AS lost, events_dropped AS dropped,
       events_excluded AS excluded, events_own AS own,
       CASE WHEN events_written > 0 THEN round(100.0 * (events_written - unresolved) / events_written, 1) END AS resolved_pct,
       rundown_names, clock,
       coalesce(exit_reason, 'running or interrupted') AS exit_reason,
       CASE WHEN stopped_at IS NULL AND NOT :running
            THEN 'run ' || run_id || ' was left open: its collector is gone (no process holds the database)'
            WHEN stopped_at IS NULL AND :now - coalesce(last_commit_at, started_at) > :stale_after
            THEN 'no commit for ' || ((:now - coalesce(last_commit_at, started_at)) / 1000000000) ||
                 ' s while its collector holds the database: it may be stuck'
       END AS warning
FROM collector_runs ORDER BY run_id DESC LIMIT 1;

-- section: destinations
-- (Each export or shipping destination: how far it has the events, and what is still to send;
-- pruned_unshipped: rows --max-size pruned before it had them; holds_segments: segments past
-- the collector's --keep kept because it has not had them: `etwaudit ship --forget NAME` lets it go.)
SELECT d.name,
       d.rows_shipped AS rows_sent,
       iso_time(d.last_success_at) AS last_success,
       (SELECT count(*) FROM events e WHERE e.id > d.shipped_through) AS backlog_rows,
       (SELECT iso_time(min(coalesce(e.ts, e.id))) FROM events e WHERE e.id > d.shipped_through) AS oldest_unsent,
       d.pruned_unshipped,
       (SELECT CASE WHEN r.keep_ns IS NOT NULL THEN
                 (SELECT count(*) FROM segments s
                  WHERE s.pruned IS NULL AND s.max_time < :now - r.keep_ns AND s.last_id > d.shipped_through
                    AND s.segment_id < (SELECT max(segment_id) FROM segments)) END
        FROM retention r) AS holds_segments,
       d.last_error
FROM destinations d
ORDER BY d.name
