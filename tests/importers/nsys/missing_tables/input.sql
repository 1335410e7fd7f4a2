-- NVTX only (like the multiprocessing sample): no CUDA tables, no GPU use; three ranges from two
-- processes. A StringIds table and NVTX_EVENTS are all there is.
CREATE TABLE StringIds(id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE NVTX_EVENTS(start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, text TEXT, globalTid INTEGER);
INSERT INTO NVTX_EVENTS VALUES(100, 200, 59, 'a', 281474976710656 + 138369 * 16777216 + 138369),
  (150, 250, 59, 'b', 281474976710656 + 138396 * 16777216 + 138400),
  (300, 400, 60, 'c', 281474976710656 + 138369 * 16777216 + 138369);
