-- Schema v4: how many file names a run learned from a file-name rundown.
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
