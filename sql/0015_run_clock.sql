-- Schema v15: which clock a live Windows run timed its events with.
--
-- 'qpc': the session's performance-counter timestamps, converted by the
-- collector against the system clock again every second (doc/design.md);
-- 'etw': ETW's own conversion, from one reference taken when the session
-- started, used when the session's clock is not this machine's counter.
-- NULL for the other sources. A run with 'etw' drifts from the system
-- clock over days and does not follow a clock step.
ALTER TABLE collector_runs ADD COLUMN clock TEXT;

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
  coalesce(exit_reason, CASE WHEN stopped_at IS NULL THEN 'running or interrupted' END) AS exit_reason,
  clock
FROM collector_runs;
