-- 2026-12-01, issue "Hardening": a generated column is computed on every read (here 15 MB a
-- row from a few bytes on disk): a table that has one is refused.
CREATE TABLE Version(version INTEGER);
INSERT INTO Version VALUES(12);
CREATE TABLE StringTable(_id_ INTEGER PRIMARY KEY AUTOINCREMENT, value TEXT NOT NULL UNIQUE);
INSERT INTO StringTable VALUES(0,'-- null --'),(1,'./app'),(2,'_Z1kv');
CREATE TABLE CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL(_id_ INTEGER PRIMARY KEY AUTOINCREMENT, start INT, end INT, deviceId INT, contextId INT, streamId INT, correlationId INT, name INT, pad AS (zeroblob(15000000)));
INSERT INTO CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL VALUES(1, 1700000000000001000, 1700000000000002000, 0, 1, 7, 1, 2);
