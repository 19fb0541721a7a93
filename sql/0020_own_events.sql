-- Schema v20: etwaudit's own events are counted apart from what a filter
-- left out.
--
-- events_excluded counted both: the events of the collector's own process
-- and database files (never recorded, doc/design.md §4) and those a user's
-- --include-path, --exclude-path, --process or --op left out. A reader
-- touching the database showed as "excluded" in a run that had no filter.
-- events_own holds the first kind now; every run adds up as
-- received = written + dropped + excluded + own.
ALTER TABLE collector_runs ADD COLUMN events_own INTEGER NOT NULL DEFAULT 0;

DROP VIEW v_runs;
CREATE VIEW v_runs AS
SELECT
  run_id, source, live, host, pid, version,
  strftime('%Y-%m-%dT%H:%M:%SZ', started_at / 1000000000, 'unixepoch') AS started,
  strftime('%Y-%m-%dT%H:%M:%SZ', stopped_at / 1000000000, 'unixepoch') AS ended,
  strftime('%Y-%m-%dT%H:%M:%SZ', last_commit_at / 1000000000, 'unixepoch') AS last_commit,
  events_received, events_written, events_dropped, events_lost, events_excluded, events_own,
  bad_input, unresolved,
  CASE WHEN events_written > 0 THEN round(100.0 * (events_written - unresolved) / events_written, 1) END
    AS resolved_pct,
  rundown_names,
  coalesce(exit_reason, CASE WHEN stopped_at IS NULL THEN 'running or interrupted' END) AS exit_reason,
  clock
FROM collector_runs;
