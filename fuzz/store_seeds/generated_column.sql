-- a generated column computes on every read: refused
DROP TABLE api;
CREATE TABLE api(start INTEGER NOT NULL, dur INTEGER NOT NULL, process_id INTEGER NOT NULL,
  thread_id INTEGER, correlation_id INTEGER, domain INTEGER, cbid INTEGER, name_id INTEGER,
  status AS (length(zeroblob(15000000))));
INSERT INTO api(start, dur, process_id) VALUES (100, 10, 1);
