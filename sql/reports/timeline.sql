-- name: timeline
-- description: Events and bytes per time bucket (--bucket 1m, 1h or 1d) and operation.
-- param: bucket  bucket length in ns, from --bucket (default 1h)
WITH buckets (bucket, op, events, bytes) AS (
  -- Hours and days of one process or path from its activity rows...
  SELECT (hour * 3600000000000) / :bucket * :bucket, op, sum(events), sum(bytes)
  FROM windowed_ops
  WHERE :bucket >= 3600000000000 AND (:process IS NOT NULL OR :path IS NOT NULL)
  GROUP BY 1, 2
  UNION ALL
  -- ...everything else from the per-minute totals.
  SELECT minute - (minute % :bucket + :bucket) % :bucket, op, sum(events), sum(bytes)
  FROM windowed_minutes
  WHERE :bucket < 3600000000000 OR (:process IS NULL AND :path IS NULL)
  GROUP BY 1, 2)
SELECT iso_time(b.bucket) AS bucket, o.name AS op, b.events, b.bytes
FROM buckets AS b JOIN ops AS o ON o.op = b.op
WHERE b.events > 0
ORDER BY b.bucket, b.op
LIMIT :limit
