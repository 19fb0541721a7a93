-- name: gaps
-- description: Time no collector run covered, and what each run lost or dropped.
-- section: gaps
-- The asked window's edges count: --since 1h over a run that covered 6 s
-- is a gap before it and one after it (the window ends at --until, else now).
WITH edges(lo, hi) AS (
  SELECT :since, CASE WHEN :since IS NOT NULL OR :until IS NOT NULL THEN coalesce(:until, :now) END),
runs AS (
  SELECT c.covered_from, c.covered_until
  FROM v_run_coverage AS c, bounds AS b
  WHERE c.covered_from IS NOT NULL AND c.covered_until >= b.lo AND c.covered_from <= b.hi
  UNION ALL SELECT lo, lo FROM edges WHERE lo IS NOT NULL
  UNION ALL SELECT hi, hi FROM edges WHERE hi IS NOT NULL),
ordered AS (
  SELECT covered_from, max(covered_until) OVER (ORDER BY covered_from ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS previous_end
  FROM runs)
SELECT iso_time(previous_end) AS gap_from, iso_time(covered_from) AS gap_until,
       round((covered_from - previous_end) / 1e9, 3) AS seconds
FROM ordered
WHERE previous_end < covered_from
ORDER BY covered_from;

-- section: runs
SELECT r.run_id, r.source, r.host, iso_time(c.covered_from) AS covered_from, iso_time(c.covered_until) AS covered_until,
       r.events_written AS written, r.events_lost AS lost, r.events_dropped AS dropped,
       r.events_excluded AS excluded, r.events_own AS own, r.bad_input, r.unresolved,
       coalesce(r.exit_reason, CASE WHEN r.stopped_at IS NULL THEN 'running or interrupted' END) AS exit_reason
FROM collector_runs AS r JOIN v_run_coverage AS c ON c.run_id = r.run_id, bounds AS b
WHERE c.covered_from IS NULL OR (c.covered_until >= b.lo AND c.covered_from <= b.hi)
ORDER BY r.run_id
