-- Schema v16: what this database is, and how far each destination has its
-- events (etwaudit export; ClickHouse shipping builds on the same cursor).
--
-- db_uuid: made once, at random, when the database gets this schema; with
-- the host's own id (/etc/machine-id, Windows' MachineGuid) and an event's
-- id it names the event everywhere: (host_id, db_uuid, event_id), or as
-- one text, event_uid = db_uuid:event_id.
CREATE TABLE identity (
  db_uuid TEXT NOT NULL
);
INSERT INTO identity (db_uuid) VALUES (
  lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' ||
  substr('89ab', 1 + abs(random() % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6))));

-- One row per destination: every event with an id up to shipped_through has
-- been delivered there (written whole and flushed, or acknowledged by the
-- receiver); the cursor moves only after that, in one small transaction,
-- so after any crash the next run sends again from the cursor: at least
-- once, and event_uid removes the repeats.
CREATE TABLE destinations (
  name            TEXT PRIMARY KEY,               -- 'jsonl:/var/log/etwaudit', or the name given
  shipped_through INTEGER NOT NULL DEFAULT 0,     -- the highest event id delivered
  rows_shipped    INTEGER NOT NULL DEFAULT 0,     -- event rows delivered in all
  created_at      INTEGER NOT NULL,
  last_success_at INTEGER,
  last_error      TEXT,                           -- why the last attempt failed; NULL after a success
  last_error_at   INTEGER
) WITHOUT ROWID;
