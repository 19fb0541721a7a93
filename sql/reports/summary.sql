-- name: summary
-- description: Events and bytes per operation, processes and files seen, and how well collectors covered the time.
-- section: operations
WITH t AS MATERIALIZED (
  SELECT sum(reads) AS reads, sum(read_bytes) AS read_bytes,
         sum(writes) AS writes, sum(write_bytes) AS write_bytes,
         sum(opens) AS opens,
         sum(closes) AS closes,
         sum(cleanups) AS cleanups,
         sum(creates) AS creates,
         sum(deletes) AS deletes,
         sum(renames) AS renames,
         sum(set_infos) AS set_infos,
         sum(flushes) AS flushes,
         sum(disk_reads) AS disk_reads, sum(disk_read_bytes) AS disk_read_bytes,
         sum(disk_writes) AS disk_writes, sum(disk_write_bytes) AS disk_write_bytes,
         sum(close_writes) AS close_writes
  FROM windowed_activity)
SELECT op, events, bytes FROM (
  SELECT o.name AS op,
         CASE o.op WHEN 0 THEN t.reads WHEN 1 THEN t.writes WHEN 2 THEN t.opens WHEN 3 THEN t.closes WHEN 4
       THEN t.cleanups WHEN 5 THEN t.creates WHEN 6 THEN t.deletes WHEN 7 THEN t.renames WHEN 8 THEN
       t.set_infos WHEN 9 THEN t.flushes WHEN 10 THEN t.disk_reads WHEN 11 THEN t.disk_writes WHEN
       12 THEN t.close_writes END AS events,
         CASE o.op WHEN 0 THEN t.read_bytes WHEN 1 THEN t.write_bytes WHEN 10 THEN t.disk_read_bytes WHEN 11
       THEN t.disk_write_bytes END AS bytes
  FROM ops AS o, t)
WHERE events > 0
ORDER BY events DESC, op;

-- section: totals
SELECT coalesce(sum(events), 0)     AS events,
       coalesce(sum(read_bytes), 0)  AS read_bytes,
       coalesce(sum(write_bytes), 0) AS write_bytes,
       count(DISTINCT CASE WHEN events > 0 THEN process_id END) AS processes,
       count(DISTINCT CASE WHEN events > 0 THEN file_id END)    AS files
FROM windowed_activity;

-- section: coverage
WITH runs AS (
  SELECT r.*, c.covered_from, c.covered_until
  FROM collector_runs AS r JOIN v_run_coverage AS c USING (run_id), bounds AS b
  WHERE c.covered_from IS NOT NULL AND c.covered_until >= b.lo AND c.covered_from <= b.hi),
ordered AS (
  SELECT covered_from, max(covered_until) OVER (ORDER BY covered_from ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS previous_end
  FROM runs)
SELECT (SELECT count(*) FROM runs)                                       AS runs,
       iso_time((SELECT min(covered_from) FROM runs))                    AS covered_from,
       iso_time((SELECT max(covered_until) FROM runs))                   AS covered_until,
       (SELECT count(*) FROM ordered WHERE previous_end < covered_from)  AS gaps,
       (SELECT coalesce(sum(covered_from - previous_end), 0) / 1000000000 FROM ordered
         WHERE previous_end < covered_from)                              AS gap_seconds,
       (SELECT coalesce(sum(events_lost), 0) FROM runs)                  AS lost,
       (SELECT coalesce(sum(events_dropped), 0) FROM runs)               AS dropped,
       (SELECT coalesce(sum(bad_input), 0) FROM runs)                    AS bad_input
