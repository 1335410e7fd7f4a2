-- Only the tables nvprof v8 always has that matter here; no kernel, memcpy, marker, device,
-- context or NAME tables at all (nvprof always creates them; a trimmed file may not):
-- the pid comes from the API rows, nothing else is invented.
CREATE TABLE Version(version INTEGER);
INSERT INTO Version VALUES(8);
CREATE TABLE StringTable(_id_ INTEGER PRIMARY KEY AUTOINCREMENT, value TEXT NOT NULL UNIQUE);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(_id_ INTEGER PRIMARY KEY AUTOINCREMENT, cbid INT NOT NULL, start INT NOT NULL, end INT NOT NULL, processId INT NOT NULL, threadId INT NOT NULL, correlationId INT NOT NULL, returnValue INT NOT NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(1, 3, 1700000000000000500, 1700000000000000600, 31337, 1, 1, 0);
