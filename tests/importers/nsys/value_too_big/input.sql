-- 2026-12-01, issue "Hardening": no single value over 16 MiB is read (SQLITE_LIMIT_LENGTH):
-- names and command lines are far shorter, and a hostile value cannot take the memory.
CREATE TABLE StringIds(id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES(1, 'k'), (2, printf('%.*c', 20000000, 'x'));
CREATE TABLE NVTX_EVENTS(start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, text TEXT, globalTid INTEGER, textId INTEGER, domainId INTEGER);
INSERT INTO NVTX_EVENTS VALUES(3680000000, NULL, 34, 'mark', 282427033443755, NULL, NULL);
