-- meta as a view: the probe and the schema check read it first
ALTER TABLE meta RENAME TO m0;
CREATE VIEW meta AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)
  SELECT key, value FROM m0, c;
