-- An SQLite file of another program, named like a profile.
CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT);
INSERT INTO users VALUES(1, 'a');
