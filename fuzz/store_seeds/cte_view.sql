-- the kernel table replaced by a view over an endless recursive CTE (hung the loader)
ALTER TABLE kernel RENAME TO k0;
CREATE VIEW kernel AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)
  SELECT x AS start, 1 AS dur, 1 AS launch_id, x AS correlation_id FROM c;
