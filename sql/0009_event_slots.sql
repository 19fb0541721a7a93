-- Schema v9: the events live in 16 slot tables, so that pruning empties a table
-- instead of deleting rows one by one.
--
-- Deleting a range of rows from a B-tree costs SQLite about as much as
-- inserting them (every leaf is rewritten, cell by cell, into the WAL), so a
-- collector at its --keep or --max-size spent a third of its time on pruning.
-- Emptying a whole table (DELETE without WHERE) only hands its pages to the
-- free list: a tenth of the cost. So the events are written into a ring of
-- slot tables events_00 .. events_15 (the table events became events_00; its
-- index of late events, events_by_ts, went with it). The writer moves on to the
-- next slot when the current one holds its share of the size cap (at most
-- 1,048,576 rows) and the next one is empty; segments.slot says where a
-- segment's events are.
--
-- A pruned segment's events stay in their slot while the slot's other
-- segments are kept, below event_slots.kept_from; when the last one goes, the
-- slot is emptied at once. So at every commit, for each slot:
--
--     rows with id >= kept_from   the events of its kept segments
--     rows with id <  kept_from   pruned; gone when the slot is emptied (pruned_rows of them)
--
-- Pruning also stopped adding each segment of a busy hour into hour_totals in
-- the segment's own transaction, which rewrote every page of the hour's totals
-- once a segment: a pruned segment keeps its activity rows (segments.pruned,
-- sql/0007) until every segment of its hour is pruned, and then the hour's are
-- added into hour_totals a few segments a transaction.
--
-- The views events and v_events show only the kept ones, and read each slot
-- by its key: a condition on id or time_ns is answered from the tables' keys.
-- A query that joins events by an id range (activity.first_id .. last_id) is
-- best written against the slot table, through segments.slot: a view in the
-- inner loop of a join is read in full.

DROP VIEW v_events;

ALTER TABLE events RENAME TO events_00;

-- The same columns as events_00 (sql/0001, 0003, 0005), in the same order.
CREATE TABLE events_01 (
  id         INTEGER PRIMARY KEY,
  ts         INTEGER,
  process_id INTEGER NOT NULL REFERENCES processes,
  tid        INTEGER,
  op         INTEGER NOT NULL REFERENCES ops,
  file_id    INTEGER NOT NULL REFERENCES files,
  offset     INTEGER,
  size       INTEGER,
  count      INTEGER,
  end_offset INTEGER,
  status     INTEGER
);
CREATE INDEX events_01_by_ts ON events_01 (ts) WHERE ts IS NOT NULL;
CREATE TABLE events_02 (
  id         INTEGER PRIMARY KEY,
  ts         INTEGER,
  process_id INTEGER NOT NULL REFERENCES processes,
  tid        INTEGER,
  op         INTEGER NOT NULL REFERENCES ops,
  file_id    INTEGER NOT NULL REFERENCES files,
  offset     INTEGER,
  size       INTEGER,
  count      INTEGER,
  end_offset INTEGER,
  status     INTEGER
);
CREATE INDEX events_02_by_ts ON events_02 (ts) WHERE ts IS NOT NULL;
CREATE TABLE events_03 (
  id         INTEGER PRIMARY KEY,
  ts         INTEGER,
  process_id INTEGER NOT NULL REFERENCES processes,
  tid        INTEGER,
  op         INTEGER NOT NULL REFERENCES ops,
  file_id    INTEGER NOT NULL REFERENCES files,
  offset     INTEGER,
  size       INTEGER,
  count      INTEGER,
  end_offset INTEGER,
  status     INTEGER
);
CREATE INDEX events_03_by_ts ON events_03 (ts) WHERE ts IS NOT NULL;
CREATE TABLE events_04 (
  id         INTEGER PRIMARY KEY,
  ts         INTEGER,
  process_id INTEGER NOT NULL REFERENCES processes,
  tid        INTEGER,
  op         INTEGER NOT NULL REFERENCES ops,
  file_id    INTEGER NOT NULL REFERENCES files,
  offset     INTEGER,
  size       INTEGER,
  count      INTEGER,
  end_offset INTEGER,
  status     INTEGER
);
CREATE INDEX events_04_by_ts ON events_04 (ts) WHERE ts IS NOT NULL;
CREATE TABLE events_05 (
  id         INTEGER PRIMARY KEY,
  ts         INTEGER,
  process_id INTEGER NOT NULL REFERENCES processes,
  tid        INTEGER,
  op         INTEGER NOT NULL REFERENCES ops,
  file_id    INTEGER NOT NULL REFERENCES files,
  offset     INTEGER,
  size       INTEGER,
  count      INTEGER,
  end_offset INTEGER,
  status     INTEGER
);
CREATE INDEX events_05_by_ts ON events_05 (ts) WHERE ts IS NOT NULL;
CREATE TABLE events_06 (
  id         INTEGER PRIMARY KEY,
  ts         INTEGER,
  process_id INTEGER NOT NULL REFERENCES processes,
  tid        INTEGER,
  op         INTEGER NOT NULL REFERENCES ops,
  file_id    INTEGER NOT NULL REFERENCES files,
  offset     INTEGER,
  size       INTEGER,
  count      INTEGER,
  end_offset INTEGER,
  status     INTEGER
);
CREATE INDEX events_06_by_ts ON events_06 (ts) WHERE ts IS NOT NULL;
CREATE TABLE events_07 (
  id         INTEGER PRIMARY KEY,
  ts         INTEGER,
  process_id INTEGER NOT NULL REFERENCES processes,
  tid        INTEGER,
  op         INTEGER NOT NULL REFERENCES ops,
  file_id    INTEGER NOT NULL REFERENCES files,
  offset     INTEGER,
  size       INTEGER,
  count      INTEGER,
  end_offset INTEGER,
  status     INTEGER
);
CREATE INDEX events_07_by_ts ON events_07 (ts) WHERE ts IS NOT NULL;
CREATE TABLE events_08 (
  id         INTEGER PRIMARY KEY,
  ts         INTEGER,
  process_id INTEGER NOT NULL REFERENCES processes,
  tid        INTEGER,
  op         INTEGER NOT NULL REFERENCES ops,
  file_id    INTEGER NOT NULL REFERENCES files,
  offset     INTEGER,
  size       INTEGER,
  count      INTEGER,
  end_offset INTEGER,
  status     INTEGER
);
CREATE INDEX events_08_by_ts ON events_08 (ts) WHERE ts IS NOT NULL;
CREATE TABLE events_09 (
  id         INTEGER PRIMARY KEY,
  ts         INTEGER,
  process_id INTEGER NOT NULL REFERENCES processes,
  tid        INTEGER,
  op         INTEGER NOT NULL REFERENCES ops,
  file_id    INTEGER NOT NULL REFERENCES files,
  offset     INTEGER,
  size       INTEGER,
  count      INTEGER,
  end_offset INTEGER,
  status     INTEGER
);
CREATE INDEX events_09_by_ts ON events_09 (ts) WHERE ts IS NOT NULL;
CREATE TABLE events_10 (
  id         INTEGER PRIMARY KEY,
  ts         INTEGER,
  process_id INTEGER NOT NULL REFERENCES processes,
  tid        INTEGER,
  op         INTEGER NOT NULL REFERENCES ops,
  file_id    INTEGER NOT NULL REFERENCES files,
  offset     INTEGER,
  size       INTEGER,
  count      INTEGER,
  end_offset INTEGER,
  status     INTEGER
);
CREATE INDEX events_10_by_ts ON events_10 (ts) WHERE ts IS NOT NULL;
CREATE TABLE events_11 (
  id         INTEGER PRIMARY KEY,
  ts         INTEGER,
  process_id INTEGER NOT NULL REFERENCES processes,
  tid        INTEGER,
  op         INTEGER NOT NULL REFERENCES ops,
  file_id    INTEGER NOT NULL REFERENCES files,
  offset     INTEGER,
  size       INTEGER,
  count      INTEGER,
  end_offset INTEGER,
  status     INTEGER
);
CREATE INDEX events_11_by_ts ON events_11 (ts) WHERE ts IS NOT NULL;
CREATE TABLE events_12 (
  id         INTEGER PRIMARY KEY,
  ts         INTEGER,
  process_id INTEGER NOT NULL REFERENCES processes,
  tid        INTEGER,
  op         INTEGER NOT NULL REFERENCES ops,
  file_id    INTEGER NOT NULL REFERENCES files,
  offset     INTEGER,
  size       INTEGER,
  count      INTEGER,
  end_offset INTEGER,
  status     INTEGER
);
CREATE INDEX events_12_by_ts ON events_12 (ts) WHERE ts IS NOT NULL;
CREATE TABLE events_13 (
  id         INTEGER PRIMARY KEY,
  ts         INTEGER,
  process_id INTEGER NOT NULL REFERENCES processes,
  tid        INTEGER,
  op         INTEGER NOT NULL REFERENCES ops,
  file_id    INTEGER NOT NULL REFERENCES files,
  offset     INTEGER,
  size       INTEGER,
  count      INTEGER,
  end_offset INTEGER,
  status     INTEGER
);
CREATE INDEX events_13_by_ts ON events_13 (ts) WHERE ts IS NOT NULL;
CREATE TABLE events_14 (
  id         INTEGER PRIMARY KEY,
  ts         INTEGER,
  process_id INTEGER NOT NULL REFERENCES processes,
  tid        INTEGER,
  op         INTEGER NOT NULL REFERENCES ops,
  file_id    INTEGER NOT NULL REFERENCES files,
  offset     INTEGER,
  size       INTEGER,
  count      INTEGER,
  end_offset INTEGER,
  status     INTEGER
);
CREATE INDEX events_14_by_ts ON events_14 (ts) WHERE ts IS NOT NULL;
CREATE TABLE events_15 (
  id         INTEGER PRIMARY KEY,
  ts         INTEGER,
  process_id INTEGER NOT NULL REFERENCES processes,
  tid        INTEGER,
  op         INTEGER NOT NULL REFERENCES ops,
  file_id    INTEGER NOT NULL REFERENCES files,
  offset     INTEGER,
  size       INTEGER,
  count      INTEGER,
  end_offset INTEGER,
  status     INTEGER
);
CREATE INDEX events_15_by_ts ON events_15 (ts) WHERE ts IS NOT NULL;

CREATE TABLE event_slots (
  slot        INTEGER PRIMARY KEY,                               -- events_NN
  kept_from   INTEGER NOT NULL DEFAULT -9223372036854775808,    -- rows below this id are pruned
  pruned_rows INTEGER NOT NULL DEFAULT 0                         -- how many rows that is
);
INSERT INTO event_slots (slot) VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9), (10), (11), (12), (13), (14), (15);

ALTER TABLE segments ADD COLUMN slot INTEGER NOT NULL DEFAULT 0;  -- events_NN holding its events

CREATE VIEW events AS
SELECT id, ts, process_id, tid, op, file_id, offset, size, count, end_offset, status FROM events_00 WHERE id >= (SELECT kept_from FROM event_slots WHERE slot = 0)
UNION ALL
SELECT id, ts, process_id, tid, op, file_id, offset, size, count, end_offset, status FROM events_01 WHERE id >= (SELECT kept_from FROM event_slots WHERE slot = 1)
UNION ALL
SELECT id, ts, process_id, tid, op, file_id, offset, size, count, end_offset, status FROM events_02 WHERE id >= (SELECT kept_from FROM event_slots WHERE slot = 2)
UNION ALL
SELECT id, ts, process_id, tid, op, file_id, offset, size, count, end_offset, status FROM events_03 WHERE id >= (SELECT kept_from FROM event_slots WHERE slot = 3)
UNION ALL
SELECT id, ts, process_id, tid, op, file_id, offset, size, count, end_offset, status FROM events_04 WHERE id >= (SELECT kept_from FROM event_slots WHERE slot = 4)
UNION ALL
SELECT id, ts, process_id, tid, op, file_id, offset, size, count, end_offset, status FROM events_05 WHERE id >= (SELECT kept_from FROM event_slots WHERE slot = 5)
UNION ALL
SELECT id, ts, process_id, tid, op, file_id, offset, size, count, end_offset, status FROM events_06 WHERE id >= (SELECT kept_from FROM event_slots WHERE slot = 6)
UNION ALL
SELECT id, ts, process_id, tid, op, file_id, offset, size, count, end_offset, status FROM events_07 WHERE id >= (SELECT kept_from FROM event_slots WHERE slot = 7)
UNION ALL
SELECT id, ts, process_id, tid, op, file_id, offset, size, count, end_offset, status FROM events_08 WHERE id >= (SELECT kept_from FROM event_slots WHERE slot = 8)
UNION ALL
SELECT id, ts, process_id, tid, op, file_id, offset, size, count, end_offset, status FROM events_09 WHERE id >= (SELECT kept_from FROM event_slots WHERE slot = 9)
UNION ALL
SELECT id, ts, process_id, tid, op, file_id, offset, size, count, end_offset, status FROM events_10 WHERE id >= (SELECT kept_from FROM event_slots WHERE slot = 10)
UNION ALL
SELECT id, ts, process_id, tid, op, file_id, offset, size, count, end_offset, status FROM events_11 WHERE id >= (SELECT kept_from FROM event_slots WHERE slot = 11)
UNION ALL
SELECT id, ts, process_id, tid, op, file_id, offset, size, count, end_offset, status FROM events_12 WHERE id >= (SELECT kept_from FROM event_slots WHERE slot = 12)
UNION ALL
SELECT id, ts, process_id, tid, op, file_id, offset, size, count, end_offset, status FROM events_13 WHERE id >= (SELECT kept_from FROM event_slots WHERE slot = 13)
UNION ALL
SELECT id, ts, process_id, tid, op, file_id, offset, size, count, end_offset, status FROM events_14 WHERE id >= (SELECT kept_from FROM event_slots WHERE slot = 14)
UNION ALL
SELECT id, ts, process_id, tid, op, file_id, offset, size, count, end_offset, status FROM events_15 WHERE id >= (SELECT kept_from FROM event_slots WHERE slot = 15);

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
      FROM events_00 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 0)
      UNION ALL
      SELECT e.ts, e.id, p.pid, p.image, p.user, e.tid, e.op, f.name,
             e.offset, e.size, e.count, e.end_offset, e.status
      FROM events_00 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NOT NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 0)
      UNION ALL
      SELECT e.id AS time_ns, e.id AS event_id, p.pid, p.image AS process, p.user, e.tid, e.op, f.name AS path,
             e.offset, e.size, e.count, e.end_offset, e.status
      FROM events_01 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 1)
      UNION ALL
      SELECT e.ts, e.id, p.pid, p.image, p.user, e.tid, e.op, f.name,
             e.offset, e.size, e.count, e.end_offset, e.status
      FROM events_01 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NOT NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 1)
      UNION ALL
      SELECT e.id AS time_ns, e.id AS event_id, p.pid, p.image AS process, p.user, e.tid, e.op, f.name AS path,
             e.offset, e.size, e.count, e.end_offset, e.status
      FROM events_02 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 2)
      UNION ALL
      SELECT e.ts, e.id, p.pid, p.image, p.user, e.tid, e.op, f.name,
             e.offset, e.size, e.count, e.end_offset, e.status
      FROM events_02 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NOT NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 2)
      UNION ALL
      SELECT e.id AS time_ns, e.id AS event_id, p.pid, p.image AS process, p.user, e.tid, e.op, f.name AS path,
             e.offset, e.size, e.count, e.end_offset, e.status
      FROM events_03 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 3)
      UNION ALL
      SELECT e.ts, e.id, p.pid, p.image, p.user, e.tid, e.op, f.name,
             e.offset, e.size, e.count, e.end_offset, e.status
      FROM events_03 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NOT NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 3)
      UNION ALL
      SELECT e.id AS time_ns, e.id AS event_id, p.pid, p.image AS process, p.user, e.tid, e.op, f.name AS path,
             e.offset, e.size, e.count, e.end_offset, e.status
      FROM events_04 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 4)
      UNION ALL
      SELECT e.ts, e.id, p.pid, p.image, p.user, e.tid, e.op, f.name,
             e.offset, e.size, e.count, e.end_offset, e.status
      FROM events_04 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NOT NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 4)
      UNION ALL
      SELECT e.id AS time_ns, e.id AS event_id, p.pid, p.image AS process, p.user, e.tid, e.op, f.name AS path,
             e.offset, e.size, e.count, e.end_offset, e.status
      FROM events_05 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 5)
      UNION ALL
      SELECT e.ts, e.id, p.pid, p.image, p.user, e.tid, e.op, f.name,
             e.offset, e.size, e.count, e.end_offset, e.status
      FROM events_05 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NOT NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 5)
      UNION ALL
      SELECT e.id AS time_ns, e.id AS event_id, p.pid, p.image AS process, p.user, e.tid, e.op, f.name AS path,
             e.offset, e.size, e.count, e.end_offset, e.status
      FROM events_06 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 6)
      UNION ALL
      SELECT e.ts, e.id, p.pid, p.image, p.user, e.tid, e.op, f.name,
             e.offset, e.size, e.count, e.end_offset, e.status
      FROM events_06 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NOT NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 6)
      UNION ALL
      SELECT e.id AS time_ns, e.id AS event_id, p.pid, p.image AS process, p.user, e.tid, e.op, f.name AS path,
             e.offset, e.size, e.count, e.end_offset, e.status
      FROM events_07 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 7)
      UNION ALL
      SELECT e.ts, e.id, p.pid, p.image, p.user, e.tid, e.op, f.name,
             e.offset, e.size, e.count, e.end_offset, e.status
      FROM events_07 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NOT NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 7)
      UNION ALL
      SELECT e.id AS time_ns, e.id AS event_id, p.pid, p.image AS process, p.user, e.tid, e.op, f.name AS path,
             e.offset, e.size, e.count, e.end_offset, e.status
      FROM events_08 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 8)
      UNION ALL
      SELECT e.ts, e.id, p.pid, p.image, p.user, e.tid, e.op, f.name,
             e.offset, e.size, e.count, e.end_offset, e.status
      FROM events_08 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NOT NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 8)
      UNION ALL
      SELECT e.id AS time_ns, e.id AS event_id, p.pid, p.image AS process, p.user, e.tid, e.op, f.name AS path,
             e.offset, e.size, e.count, e.end_offset, e.status
      FROM events_09 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 9)
      UNION ALL
      SELECT e.ts, e.id, p.pid, p.image, p.user, e.tid, e.op, f.name,
             e.offset, e.size, e.count, e.end_offset, e.status
      FROM events_09 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NOT NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 9)
      UNION ALL
      SELECT e.id AS time_ns, e.id AS event_id, p.pid, p.image AS process, p.user, e.tid, e.op, f.name AS path,
             e.offset, e.size, e.count, e.end_offset, e.status
      FROM events_10 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 10)
      UNION ALL
      SELECT e.ts, e.id, p.pid, p.image, p.user, e.tid, e.op, f.name,
             e.offset, e.size, e.count, e.end_offset, e.status
      FROM events_10 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NOT NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 10)
      UNION ALL
      SELECT e.id AS time_ns, e.id AS event_id, p.pid, p.image AS process, p.user, e.tid, e.op, f.name AS path,
             e.offset, e.size, e.count, e.end_offset, e.status
      FROM events_11 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 11)
      UNION ALL
      SELECT e.ts, e.id, p.pid, p.image, p.user, e.tid, e.op, f.name,
             e.offset, e.size, e.count, e.end_offset, e.status
      FROM events_11 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NOT NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 11)
      UNION ALL
      SELECT e.id AS time_ns, e.id AS event_id, p.pid, p.image AS process, p.user, e.tid, e.op, f.name AS path,
             e.offset, e.size, e.count, e.end_offset, e.status
      FROM events_12 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 12)
      UNION ALL
      SELECT e.ts, e.id, p.pid, p.image, p.user, e.tid, e.op, f.name,
             e.offset, e.size, e.count, e.end_offset, e.status
      FROM events_12 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NOT NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 12)
      UNION ALL
      SELECT e.id AS time_ns, e.id AS event_id, p.pid, p.image AS process, p.user, e.tid, e.op, f.name AS path,
             e.offset, e.size, e.count, e.end_offset, e.status
      FROM events_13 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 13)
      UNION ALL
      SELECT e.ts, e.id, p.pid, p.image, p.user, e.tid, e.op, f.name,
             e.offset, e.size, e.count, e.end_offset, e.status
      FROM events_13 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NOT NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 13)
      UNION ALL
      SELECT e.id AS time_ns, e.id AS event_id, p.pid, p.image AS process, p.user, e.tid, e.op, f.name AS path,
             e.offset, e.size, e.count, e.end_offset, e.status
      FROM events_14 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 14)
      UNION ALL
      SELECT e.ts, e.id, p.pid, p.image, p.user, e.tid, e.op, f.name,
             e.offset, e.size, e.count, e.end_offset, e.status
      FROM events_14 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NOT NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 14)
      UNION ALL
      SELECT e.id AS time_ns, e.id AS event_id, p.pid, p.image AS process, p.user, e.tid, e.op, f.name AS path,
             e.offset, e.size, e.count, e.end_offset, e.status
      FROM events_15 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 15)
      UNION ALL
      SELECT e.ts, e.id, p.pid, p.image, p.user, e.tid, e.op, f.name,
             e.offset, e.size, e.count, e.end_offset, e.status
      FROM events_15 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NOT NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 15)) AS t;
