-- a t0 at the top of int64: no record has a place on the axis
UPDATE meta SET value = 9223372036854775807 WHERE key = 't0';
UPDATE calibration SET realtime = -9223372036854775807 WHERE label = 'start';
