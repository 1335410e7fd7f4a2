report --format csv --table windows --baseline tests/verdicts/solo-spin tests/verdicts/offset-75-mps-on
