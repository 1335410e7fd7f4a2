-- ids far beyond the row count (maps are sized by the largest id): refused when absurd
UPDATE strings SET id = 4000000000 WHERE id = (SELECT max(id) FROM strings);
UPDATE launch SET id = 9000 WHERE id = 1;
UPDATE kernel SET launch_id = 9000 WHERE launch_id = 1;
