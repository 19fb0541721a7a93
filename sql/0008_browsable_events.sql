-- Schema v8: v_events answers a time range and "newest first" from the table's key.
--
-- events.id is an event's time, unless it shared its time with another event
-- or came late; then ts holds the exact time (sql/0001_initial.sql). v_events
-- showed coalesce(ts, id), which no index serves, so a filter on time_ns or an
-- ORDER BY time_ns read every event (32 s for the newest 20 of 10 million).
-- It is now two parts: the events whose time is their id, filtered and
-- ordered by the table's key, and the few whose time is ts, through a partial
-- index of just those. SQLite pushes a condition on time_ns into both and
-- merges them for an ORDER BY time_ns: a minute of 10 million events takes
-- milliseconds, and so do the newest 20. Each part joins the names itself, so
-- that a path filter still starts from files_by_path.
--
-- A filter on path, process or user, or on the text column time, still reads
-- every event (seconds on 10 million): the reports (etwaudit query) and the
-- activity table find them without that.

CREATE INDEX events_by_ts ON events (ts) WHERE ts IS NOT NULL;

DROP VIEW v_events;
CREATE VIEW v_events AS
SELECT
  strftime('%Y-%m-%dT%H:%M:%S', t.time_ns / 1000000000, 'unixepoch')
    || printf('.%07dZ', (t.time_ns % 1000000000) / 100) AS time,
  t.pid                                                 AS pid,
  t.process                                             AS process,
  t.user                                                AS user,
  (SELECT o.name FROM ops o WHERE o.op = t.op)          AS op,
  t.path                                                AS path,
  t.offset                                              AS offset,
  t.size                                                AS size,
  coalesce(t.count, 1)                                  AS count,
  CASE WHEN t.count > 1 THEN coalesce(t.end_offset, t.offset + t.size) END AS end_offset,
  CASE WHEN t.status IS NOT NULL THEN printf('0x%08X', t.status) END AS status,
  t.tid                                                 AS tid,
  t.time_ns                                             AS time_ns,
  t.event_id                                            AS event_id
FROM (SELECT e.id AS time_ns, e.id AS event_id, p.pid, p.image AS process, p.user, e.tid, e.op, f.name AS path,
             e.offset, e.size, e.count, e.end_offset, e.status
      FROM events e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NULL
      UNION ALL
      SELECT e.ts, e.id, p.pid, p.image, p.user, e.tid, e.op, f.name,
             e.offset, e.size, e.count, e.end_offset, e.status
      FROM events e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NOT NULL) AS t;
