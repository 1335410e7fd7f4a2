CREATE TABLE padding(b BLOB);
INSERT INTO padding VALUES (zeroblob(3000000));
