-- Schema v19: a run's end is the time it stopped, and nothing while it is
-- open.
--
-- v_runs.ended was the last commit of a run that had not stopped, which
-- reads as an end for a collector that is still running. Now ended is
-- NULL until the run stops (a run whose collector died stays NULL, its
-- exit_reason 'running or interrupted'), and last_commit says how far the
-- run has written.
DROP VIEW v_runs;
CREATE VIEW v_runs AS
SELECT
  run_id, source, live, host, pid, version,
  strftime('%Y-%m-%dT%H:%M:%SZ', started_at / 1000000000, 'unixepoch') AS started,
  strftime('%Y-%m-%dT%H:%M:%SZ', stopped_at / 1000000000, 'unixepoch') AS ended,
  strftime('%Y-%m-%dT%H:%M:%SZ', last_commit_at / 1000000000, 'unixepoch') AS last_commit,
  events_received, events_written, events_dropped, events_lost, events_excluded,
  bad_input, unresolved,
  CASE WHEN events_written > 0 THEN round(100.0 * (events_written - unresolved) / events_written, 1) END
    AS resolved_pct,
  rundown_names,
  coalesce(exit_reason, CASE WHEN stopped_at IS NULL THEN 'running or interrupted' END) AS exit_reason,
  clock
FROM collector_runs;
