-- Schema v4: how many file names a run learned from a file-name rundown,
-- the status of operations that failed, and who ran each process.
--
-- The kernel names the files that are already open when a session starts
-- only in a rundown (FileIo FileRundown events): at the start, when the
-- collector asks for it, and when the session stops. A live run on Windows
-- that shows 0 here got none at its start, so the events of files opened
-- before it stay unresolved until the end; an import shows what the trace
-- held.
ALTER TABLE collector_runs ADD COLUMN rundown_names INTEGER NOT NULL DEFAULT 0;

DROP VIEW v_runs;
CREATE VIEW v_runs AS
SELECT
  run_id, source, live, host, pid, version,
  strftime('%Y-%m-%dT%H:%M:%SZ', started_at / 1000000000, 'unixepoch') AS started,
  strftime('%Y-%m-%dT%H:%M:%SZ', coalesce(stopped_at, last_commit_at) / 1000000000, 'unixepoch') AS ended,
  events_received, events_written, events_dropped, events_lost, events_excluded,
  bad_input, unresolved,
  CASE WHEN events_written > 0 THEN round(100.0 * (events_written - unresolved) / events_written, 1) END
    AS resolved_pct,
  rundown_names,
  coalesce(exit_reason, CASE WHEN stopped_at IS NULL THEN 'running or interrupted' END) AS exit_reason
FROM collector_runs;

-- The NTSTATUS of an operation that failed (Windows, from the operation's
-- OperationEnd: 3221225524 = 0xC0000034, the file does not exist); NULL for
-- one that succeeded or whose end is unknown. A failed read or write moved no
-- bytes (size 0); a failed open stays an open.
ALTER TABLE events ADD COLUMN status INTEGER;

-- Who: the parent's pid and the account of a process, where the source says
-- (Windows: the kernel's Process events; user is DOMAIN\user, or the SID
-- when no name is known, e.g. on another machine than the trace's).
ALTER TABLE processes ADD COLUMN parent_pid INTEGER;
ALTER TABLE processes ADD COLUMN user TEXT;

DROP VIEW v_events;
CREATE VIEW v_events AS
SELECT
  strftime('%Y-%m-%dT%H:%M:%S', t.time / 1000000000, 'unixepoch')
    || printf('.%07dZ', (t.time % 1000000000) / 100) AS time,
  p.pid          AS pid,
  p.image        AS process,
  p.user         AS user,
  o.name         AS op,
  f.name         AS path,
  t.offset       AS offset,
  t.size         AS size,
  coalesce(t.count, 1) AS count,
  CASE WHEN t.count > 1 THEN coalesce(t.end_offset, t.offset + t.size) END AS end_offset,
  CASE WHEN t.status IS NOT NULL THEN printf('0x%08X', t.status) END AS status,
  t.tid          AS tid,
  t.time         AS time_ns,
  t.id           AS event_id
FROM (SELECT e.*, coalesce(e.ts, e.id) AS time FROM events e) AS t
JOIN processes p ON p.process_id = t.process_id
JOIN v_files f ON f.file_id = t.file_id
JOIN ops o ON o.op = t.op;
