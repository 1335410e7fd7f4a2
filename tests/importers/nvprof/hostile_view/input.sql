-- 2026-12-01, issue "Hardening": the kernel table replaced by a view over an endless recursive
-- CTE hung the importer. Views are refused by name, at once.
CREATE TABLE Version(version INTEGER);
INSERT INTO Version VALUES(12);
CREATE TABLE StringTable(_id_ INTEGER PRIMARY KEY AUTOINCREMENT, value TEXT NOT NULL UNIQUE);
INSERT INTO StringTable VALUES(0,'-- null --'),(1,'./app'),(2,'_Z1kv');
CREATE TABLE CUPTI_ACTIVITY_KIND_NAME(_id_ INTEGER PRIMARY KEY AUTOINCREMENT, objectKind INT NOT NULL, objectId BLOB NOT NULL, name INT NOT NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_NAME VALUES(1, 1, X'E8030000', 1);
CREATE VIEW CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL AS
  WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)
  SELECT x AS _id_, 1700000000000000000 + x AS start, 1700000000000000005 + x AS end, 0 AS deviceId,
         1 AS contextId, 7 AS streamId, x AS correlationId, 2 AS name FROM c;
