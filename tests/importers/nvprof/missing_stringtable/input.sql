-- Version and CUPTI tables but no StringTable: not an nvprof database.
CREATE TABLE Version(version INTEGER);
INSERT INTO Version VALUES(12);
CREATE TABLE CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL(_id_ INTEGER PRIMARY KEY AUTOINCREMENT, start INT, end INT, deviceId INT, contextId INT, streamId INT, correlationId INT, name INT);
