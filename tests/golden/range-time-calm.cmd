report --color never --from 0.2s --to 600ms @FIX@/pool
