-- Schema v2: events and bytes per minute and operation.
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
