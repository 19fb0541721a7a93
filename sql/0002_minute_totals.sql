-- Schema v2: events and bytes per minute and operation; v_runs shows the share of named events.
--
-- The writer keeps these totals in the same transaction as the events they
-- count, as it keeps activity. They answer "what happened per minute (hour,
-- day)" without reading the events: a timeline of a whole day is a few
-- thousand rows instead of millions of events. Reports that pick a process or
-- a path still use activity and the events, which know who did what.

CREATE TABLE minute_totals (
  minute INTEGER NOT NULL,           -- minutes since epoch of the events' exact time
  op     INTEGER NOT NULL REFERENCES ops,
  events INTEGER NOT NULL,
  bytes  INTEGER NOT NULL,           -- sum of the known sizes (0 for operations without one)
  PRIMARY KEY (minute, op)
) WITHOUT ROWID;

-- Databases written by schema v1 get their totals now. The CASE rounds times
-- before 1970 down, as the writer does.
INSERT INTO minute_totals (minute, op, events, bytes)
SELECT minute, op, count(*), sum(max(coalesce(size, 0), 0))
FROM (SELECT op, size,
             CASE WHEN coalesce(ts, id) >= 0 THEN coalesce(ts, id) / 60000000000
                  ELSE (coalesce(ts, id) + 1) / 60000000000 - 1 END AS minute
      FROM events)
GROUP BY minute, op;

-- The runs, with the share of their events whose file has a name (after
-- back-fill): how well a run could name what it saw.
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
  coalesce(exit_reason, CASE WHEN stopped_at IS NULL THEN 'running or interrupted' END) AS exit_reason
FROM collector_runs;
