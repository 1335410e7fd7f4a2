-- triggers fire on writes only (and are off for readers): the file loads
CREATE TRIGGER grow AFTER UPDATE ON kernel BEGIN INSERT INTO kernel SELECT * FROM kernel; END;
CREATE TRIGGER grow2 AFTER DELETE ON strings BEGIN INSERT INTO strings(text) VALUES (randomblob(1000000)); END;
