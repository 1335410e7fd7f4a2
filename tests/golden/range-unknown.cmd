report --color never --range nowhere @FIX@/pool
