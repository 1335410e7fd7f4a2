-- TARGET_INFO_CUDA_CONTEXT_INFO with several rows for one context, and one context id in two
-- processes. Rows of one (process, context) are merged in table order: green if any row says so,
-- the last non-zero parent and SM count (an SM count only counts on a green row). pid 56747:
-- context 2 is green with parent 5 and 20 SMs (three rows); context 4 has a parent (3) and is not
-- green (a row with nothing to say, then one with the parent); context 1 has no row. pid 56748:
-- its context 2 is green with parent 1 and 10 SMs, read first. Added 2026-12-03 when the lookup
-- became a binary search.
CREATE TABLE StringIds(id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES(1,'spin'),(2,'spin()');
CREATE TABLE TARGET_INFO_SESSION_START_TIME(utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES(1737520449000000000, '2025-01-22T04:34:09', '');
CREATE TABLE TARGET_INFO_GPU(vmId INTEGER, id INTEGER, name TEXT, uuid TEXT, cuDevice INTEGER, smCount INTEGER, computeMajor INTEGER, computeMinor INTEGER, totalMemory INTEGER);
INSERT INTO TARGET_INFO_GPU VALUES(281474976710656, 0, 'NVIDIA H200', 'ac74a997-ee7b-a340-120e-6ba7257abde3', 0, 132, 9, 0, 150000000000);
CREATE TABLE TARGET_INFO_CUDA_CONTEXT_INFO(nullStreamId INTEGER NOT NULL, hwId INTEGER NOT NULL, vmId INTEGER NOT NULL, processId INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, parentContextId INTEGER, isGreenContext INTEGER, numMultiprocessors INTEGER);
INSERT INTO TARGET_INFO_CUDA_CONTEXT_INFO VALUES
  (9, 0, 1, 56748, 0, 2, 1, 1, 10),
  (9, 0, 1, 56747, 0, 2, 1, 1, 66),
  (13, 0, 1, 56747, 0, 4, 0, 0, 132),
  (9, 0, 1, 56747, 0, 2, 5, 0, 132),
  (13, 0, 1, 56747, 0, 4, 3, 0, 132),
  (9, 0, 1, 56747, 0, 2, 0, 1, 20);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL);
-- 282427033387008 = vmId 1 (1 << 48) + pid 56747 << 24; 282427050164224: pid 56748
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
  (1000, 2000, 0, 1, 7, 1, 282427033387008, 2, 1, 16, 66, 1, 1, 128, 1, 1, 0, 0),
  (1000, 2000, 0, 2, 9, 2, 282427033387008, 2, 1, 16, 66, 1, 1, 128, 1, 1, 0, 0),
  (3000, 4000, 0, 4, 13, 3, 282427033387008, 2, 1, 16, 66, 1, 1, 128, 1, 1, 0, 0),
  (3000, 4000, 0, 2, 9, 4, 282427050164224, 2, 1, 16, 66, 1, 1, 128, 1, 1, 0, 0);
