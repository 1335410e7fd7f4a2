-- 2026-12-01, issue "Hardening": a StringTable view handing out randomblob(1e9) took 2 GB of
-- memory. Views are refused by name, before a row is read.
CREATE TABLE Version(version INTEGER);
INSERT INTO Version VALUES(12);
CREATE TABLE s0(_id_ INTEGER PRIMARY KEY AUTOINCREMENT, value TEXT NOT NULL UNIQUE);
INSERT INTO s0 VALUES(0,'-- null --'),(1,'./app'),(2,'_Z1kv');
CREATE VIEW StringTable AS SELECT _id_, CASE WHEN _id_ = 2 THEN randomblob(1000000000) ELSE value END AS value FROM s0;
CREATE TABLE CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL(_id_ INTEGER PRIMARY KEY AUTOINCREMENT, start INT, end INT, deviceId INT, contextId INT, streamId INT, correlationId INT, name INT);
INSERT INTO CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL VALUES(1, 1700000000000001000, 1700000000000002000, 0, 1, 7, 1, 2);
