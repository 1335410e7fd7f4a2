report --color never --baseline tests/verdicts/solo-spin tests/verdicts/offset-50-mps-off
