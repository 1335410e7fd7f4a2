report --format json --range calm @FIX@/pool
