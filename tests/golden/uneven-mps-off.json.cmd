report --format json --baseline tests/verdicts/solo-uneven tests/verdicts/uneven-mps-off
