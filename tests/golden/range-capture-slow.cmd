report --color never --range slow @FIX@/pool
