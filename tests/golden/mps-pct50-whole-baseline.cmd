report --color never --baseline tests/verdicts/solo-sat tests/verdicts/mps-pct50
