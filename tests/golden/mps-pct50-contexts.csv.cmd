report --format csv --table contexts tests/verdicts/mps-pct50
