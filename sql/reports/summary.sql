-- name: summary
-- description: Events and bytes per operation, processes and files seen, and how well collectors covered the time.
-- section: operations
SELECT o.name AS op, t.events, t.bytes
FROM windowed_op_totals AS t JOIN ops AS o ON o.op = t.op
WHERE t.events > 0
ORDER BY t.events DESC, o.name;

-- section: totals
SELECT coalesce(sum(events), 0)                                 AS events,
       -- NULL where the events had no sizes (fanotify), 0 where there were none
       coalesce(sum(read_bytes), CASE WHEN coalesce(sum(reads), 0) = 0 THEN 0 END)   AS read_bytes,
       coalesce(sum(write_bytes), CASE WHEN coalesce(sum(writes), 0) = 0 THEN 0 END) AS write_bytes,
       count(DISTINCT CASE WHEN events > 0 OR (:failed_only AND failed > 0) THEN process_id END) AS processes,
       count(DISTINCT CASE WHEN events > 0 OR (:failed_only AND failed > 0) THEN file_id END)    AS files,
       coalesce(sum(failed), CASE WHEN count(*) = 0 THEN 0 END) AS failed  -- NULL with --op: not counted per operation
FROM windowed_activity;

-- section: coverage
-- Gaps as the gaps report counts them: the asked window's edges too.
WITH edges(lo, hi) AS (
  SELECT :since, CASE WHEN :since IS NOT NULL OR :until IS NOT NULL THEN coalesce(:until, :now) END),
runs AS (
  SELECT r.*, c.covered_from, c.covered_until
  FROM collector_runs AS r JOIN v_run_coverage AS c USING (run_id), bounds AS b
  WHERE c.covered_from IS NOT NULL AND c.covered_until >= b.lo AND c.covered_from <= b.hi),
spans AS (
  SELECT covered_from, covered_until FROM runs
  UNION ALL SELECT lo, lo FROM edges WHERE lo IS NOT NULL
  UNION ALL SELECT hi, hi FROM edges WHERE hi IS NOT NULL),
ordered AS (
  SELECT covered_from, max(covered_until) OVER (ORDER BY covered_from ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS previous_end
  FROM spans)
SELECT (SELECT count(*) FROM runs)                                       AS runs,
       iso_time((SELECT min(covered_from) FROM runs))                    AS covered_from,
       iso_time((SELECT max(covered_until) FROM runs))                   AS covered_until,
       (SELECT count(*) FROM ordered WHERE previous_end < covered_from)  AS gaps,
       (SELECT round(coalesce(sum(covered_from - previous_end), 0) / 1e9, 3) FROM ordered
         WHERE previous_end < covered_from)                              AS gap_seconds,
       (SELECT coalesce(sum(events_lost), 0) FROM runs)                  AS lost,
       (SELECT coalesce(sum(events_dropped), 0) FROM runs)               AS dropped,
       (SELECT coalesce(sum(bad_input), 0) FROM runs)                    AS bad_input
