-- times that overflow int64 or leave +-2^62: refused and counted (rows_refused)
UPDATE kernel SET dur = 9223372036854775807 WHERE rowid = 1;
UPDATE kernel SET start = -9223372036854775807 WHERE rowid = 2;
UPDATE memcpy SET start = 9223372036854775807;
UPDATE api SET dur = 9223372036854775807;
UPDATE "range" SET start = 4611686018427387904;
UPDATE calibration SET realtime = 9223372036854775807, cupti = -1 WHERE label = 'end';
