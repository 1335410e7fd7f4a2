report --color never --baseline tests/verdicts/solo-spin tests/verdicts/ctx-green-2
