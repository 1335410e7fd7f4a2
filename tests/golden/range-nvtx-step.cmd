report --color never --range step @FIX@/pool
