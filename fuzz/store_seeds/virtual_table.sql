-- a virtual table where a table is expected: refused
DROP TABLE memset;
CREATE VIRTUAL TABLE memset USING fts5(start, dur, context_row, stream_id, correlation_id, value,
  bytes, mem_kind);
