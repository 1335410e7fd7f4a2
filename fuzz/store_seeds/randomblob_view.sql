-- strings as a view handing out randomblob(1e9) (took 2 GB)
ALTER TABLE strings RENAME TO s0;
CREATE VIEW strings AS SELECT id, randomblob(1000000000) AS text, demangled FROM s0;
