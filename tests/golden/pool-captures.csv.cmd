report --format csv --table captures @FIX@/pool
